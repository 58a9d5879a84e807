// The writer thread on a real SQLite file: batching, order, commit-before-answer, failures, stalls.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WINDOW_MS } from '../../db/commit-plan';
import { RESERVED_IDS_AT_A_TIME } from '../../db/outbox-store';
import Database from '../../db/sqlite';
import { WriteCancelled, WriteFailed, Writer } from '../../db/writer';
import type { VerifyDto } from '../../model/messages';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Writer (one writer thread, pipelined group commit)', () => {
  let dir: string;
  let file: string;
  let writer: Writer;
  let other: Database.Database;
  const count = () => other.prepare('SELECT count(*) FROM sortation_queue').pluck().get() as number;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-writer-'));
    file = path.join(dir, 'q.db');
    writer = await Writer.start({ file, synchronous: 'FULL', groupCommit: true, stallMs: 50 });
    other = new Database(file); // another connection: an operator's sqlite3, say
    other.pragma('busy_timeout = 5000');
  });
  /** A second writer on a file of its own in `dir`, with a commit window of `windowMs` and no hold. */
  const windowedWriter = (name: string, windowMs: number) =>
    Writer.start({ file: path.join(dir, name), synchronous: 'FULL', groupCommit: true, timing: { windowMs, holdMs: 0 } });
  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a durable write waits the commit window it is given (config.json CommitWindowMs) before its commit', async () => {
    const slow = await windowedWriter('window.db', 150);
    try {
      const t = performance.now();
      await slow.run('enqueue', [[verify('w')], 'T']);
      expect(performance.now() - t).toBeGreaterThanOrEqual(140);
    } finally {
      await slow.close();
    }
  });

  it("counts a telegram's commit window from the end of its wait for company on the main thread, so that a busy event loop does not add to it", async () => {
    // The telegram waits for company on the main thread (db/writer.ts, coalesceMs: 50 ms here),
    // here held up 300 ms by a busy event loop: a writer that counted its 400 ms window from its
    // arrival would commit it about 700 ms after it was given; counted from the end of its wait for
    // company, 450 ms.
    const windowed = await windowedWriter('given.db', 400);
    try {
      await windowed.run('setPeerSession', ['PLC01', 'E1', 0, 'T']);
      const t = performance.now();
      const accepted = windowed.run('acceptFromPeer', ['PLC01', 1, 0, verify('g'), 'T']);
      for (const until = Date.now() + 300; Date.now() < until;);
      await accepted;
      const took = performance.now() - t;
      expect(took).toBeGreaterThanOrEqual(390);
      expect(took).toBeLessThan(600);
    } finally {
      await windowed.close();
    }
  });

  it('commits the writes of one turn in one transaction; each resolves only once committed, in order', async () => {
    const before = writer.status().Commits;
    const resolved: string[] = [];
    const seenAtResolve: number[] = [];
    const writes = ['a', 'b', 'c', 'd'].map((t) =>
      writer.run('enqueue', [[verify(t)], 'T']).then((ids) => {
        resolved.push(t);
        seenAtResolve.push(count());
        return ids;
      }),
    );
    expect(count()).toBe(0);
    expect((await Promise.all(writes)).flat()).toEqual([1, 2, 3, 4]);
    expect(resolved).toEqual(['a', 'b', 'c', 'd']);
    expect(seenAtResolve.every((n) => n === 4)).toBe(true); // visible to another connection when answered
    expect(writer.status()).toMatchObject({ State: 'Ok', Commits: before + 1, PendingWrites: 0 });
  });

  it('a failing command fails alone: the others of its transaction are committed', async () => {
    const good = writer.run('enqueue', [[verify('ok')], 'T']);
    const bad = writer.run('enqueue', [[{ ...verify('x'), Type: 'BOGUS' } as unknown as VerifyDto], 'T']);
    const alsoGood = writer.run('enqueue', [[verify('ok2')], 'T']);
    await expect(bad).rejects.toThrow(WriteFailed);
    await expect(bad).rejects.toThrow(/CHECK constraint failed/);
    expect([...(await good), ...(await alsoGood)]).toHaveLength(2);
    expect(count()).toBe(2);
    expect(writer.status().State).toBe('Ok'); // a command's own error is not a storage failure
  });

  it('while another connection holds the write lock: stalled, not frozen; what arrives meanwhile goes into the next commit', async () => {
    other.exec('BEGIN IMMEDIATE');
    const first = writer.run('enqueue', [[verify('1')], 'T']);
    await sleep(120 + WINDOW_MS); // its commit window first
    const rest = [writer.run('enqueue', [[verify('2')], 'T']), writer.run('enqueue', [[verify('3')], 'T'])];
    await sleep(20);
    const stalled = writer.status();
    expect(stalled).toMatchObject({ State: 'Stalled', WaitingFor: 'Lock', PendingWrites: 3 });
    expect(Date.now() - Date.parse(stalled.Since)).toBeGreaterThanOrEqual(100);
    const commits = stalled.Commits;
    other.exec('COMMIT');
    await Promise.all([first, ...rest]);
    expect(writer.status()).toMatchObject({ State: 'Ok', Commits: commits + 1, WaitingFor: null });
    expect(writer.status().LastCommitMs).toBeGreaterThanOrEqual(100); // the lock wait is part of it
  });

  it('a write the writer has not started within cancelAfterMs is refused and never written', async () => {
    other.exec('BEGIN IMMEDIATE');
    const blocked = writer.run('enqueue', [[verify('waits')], 'T']);
    const refused = writer.run(
      'addToOutbox',
      [{ kind: 'ASSIGNMENT', body: { TrackID: 'T1', Destination: 'D1', Barcode: '' } }, null, 'T'],
      { cancelAfterMs: 100 },
    );
    await expect(refused).rejects.toThrow(WriteCancelled);
    other.exec('COMMIT');
    await blocked;
    await writer.run('enqueue', [[verify('after')], 'T']);
    expect(other.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
    expect(count()).toBe(2);
  });

  it('runs a checkpoint between transactions', async () => {
    await writer.run('enqueue', [[verify('a')], 'T']);
    expect(await writer.run('checkpoint', [])).toMatchObject({ busy: false });
  });

  describe('an outbox entry added before its sync (addToOutboxUnsynced, DurableBySorterAck)', () => {
    const assignment = (t: string) => ({ kind: 'ASSIGNMENT' as const, body: { TrackID: t, Destination: 'D1', Barcode: '' } });
    const WINDOW = 300;
    let slow: Writer;
    let slowFile: string;
    beforeEach(async () => {
      slowFile = path.join(dir, 'unsynced.db');
      slow = await Writer.start({ file: slowFile, synchronous: 'FULL', groupCommit: true, timing: { windowMs: WINDOW, holdMs: 0 } });
    });
    afterEach(() => slow.close());
    const reserved = (db: Database.Database) => db.prepare('SELECT upto FROM outbox_reserved').pluck().get() as number;

    it('is committed at once, unsynced, with its id reserved durably first (one synced commit per block of ids)', async () => {
      const t = performance.now();
      const first = await slow.runUnsynced('addToOutboxUnsynced', [assignment('A'), null, 'T']);
      // The first one reserves a block of ids: synced, so it is durable when committed.
      await first.durable;
      expect(performance.now() - t).toBeLessThan(WINDOW);
      const reader = new Database(slowFile, { readonly: true });
      try {
        expect(first.value).toBe(1);
        expect(reserved(reader)).toBe(1 + RESERVED_IDS_AT_A_TIME);
        const syncs = slow.status().Syncs;
        const t2 = performance.now();
        const second = await slow.runUnsynced('addToOutboxUnsynced', [assignment('B'), null, 'T']);
        // Committed (another connection sees it) well before the window, without a sync.
        expect(performance.now() - t2).toBeLessThan(WINDOW / 2);
        expect(reader.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(2);
        expect(slow.status().Syncs).toBe(syncs);
        // Nobody said otherwise: the writer syncs the WAL once the window is over.
        await second.durable;
        expect(performance.now() - t2).toBeGreaterThanOrEqual(WINDOW - 10);
        expect(slow.status().Syncs).toBe(syncs + 1);
      } finally {
        reader.close();
      }
    });

    it('durable another way (the sorter acknowledged it) before the window ends: no sync is owed', async () => {
      await (
        await slow.runUnsynced('addToOutboxUnsynced', [assignment('A'), null, 'T'])
      ).durable; // the reservation's sync
      const syncs = slow.status().Syncs;
      const entry = await slow.runUnsynced('addToOutboxUnsynced', [assignment('B'), null, 'T']);
      entry.durableElsewhere();
      await entry.durable;
      await sleep(WINDOW + 100);
      expect(slow.status().Syncs).toBe(syncs);
    });

    it("a telegram's synced commit makes it durable too, without a sync of its own", async () => {
      await slow.run('ensurePeerSession', ['PLC01', 'T']);
      await (
        await slow.runUnsynced('addToOutboxUnsynced', [assignment('A'), null, 'T'])
      ).durable;
      const syncs = slow.status().Syncs;
      const t = performance.now();
      const telegram = slow.run('acceptFromPeer', ['PLC01', 1, 0, verify('v'), 'T']);
      await sleep(20);
      const entry = await slow.runUnsynced('addToOutboxUnsynced', [assignment('B'), null, 'T']);
      await Promise.all([entry.durable, telegram]);
      // The telegram waited its window from its own arrival, and its commit's sync took the entry along.
      expect(performance.now() - t).toBeLessThan(WINDOW + 20 + 100);
      expect(slow.status().Syncs).toBe(syncs + 1);
    });

    it('while POSTs come faster than postGroupMs (config.json PostGroupMs), an entry waits up to that long for the next and shares its commit; a lone one goes at once', async () => {
      const GROUP = 200; // long, so that the bounds hold on a slow machine
      await slow.close();
      slow = await Writer.start({
        file: slowFile,
        synchronous: 'FULL',
        groupCommit: true,
        timing: { windowMs: WINDOW, holdMs: 0 },
        postGroupMs: GROUP,
      });
      // The first POST came after none: at once (its id block's reservation is synced).
      await (
        await slow.runUnsynced('addToOutboxUnsynced', [assignment('A'), null, 'T'])
      ).durable;
      const commits = slow.status().Commits;
      const t = performance.now();
      const b = slow.runUnsynced('addToOutboxUnsynced', [assignment('B'), null, 'T']);
      await sleep(20);
      const c = slow.runUnsynced('addToOutboxUnsynced', [assignment('C'), null, 'T']);
      expect((await Promise.all([b, c])).map((e) => e.value)).toEqual([2, 3]);
      // B came right after A: it waited for company, and C shares its commit.
      expect(performance.now() - t).toBeGreaterThanOrEqual(GROUP - 10);
      expect(slow.status().Commits).toBe(commits + 1);
      // Once they come further apart than that, none waits.
      await sleep(GROUP + 50);
      const t2 = performance.now();
      expect((await slow.runUnsynced('addToOutboxUnsynced', [assignment('D'), null, 'T'])).value).toBe(4);
      expect(performance.now() - t2).toBeLessThan(GROUP / 2);
      expect(slow.status().Commits).toBe(commits + 2);
    });

    it('a clean stop brings the reservation down to the last id given; a start after a crash skips every reserved id', async () => {
      const last = await slow.runUnsynced('addToOutboxUnsynced', [assignment('A'), null, 'T']);
      await slow.close();
      let db = new Database(slowFile);
      expect(reserved(db)).toBe(last.value);
      // As a crash would leave it: ids up to 5000 may have reached the sorter, their rows lost.
      db.prepare('UPDATE outbox_reserved SET upto = 5000').run();
      db.close();
      slow = await Writer.start({ file: slowFile, synchronous: 'FULL', groupCommit: true });
      expect(await slow.run('addToOutbox', [assignment('B'), null, 'T'])).toBe(5001);
      expect((await slow.runUnsynced('addToOutboxUnsynced', [assignment('C'), null, 'T'])).value).toBe(5002);
      await slow.close();
      db = new Database(slowFile);
      expect(reserved(db)).toBe(5002);
      db.close();
      slow = await Writer.start({ file: slowFile, synchronous: 'FULL', groupCommit: true });
      expect(await slow.run('addToOutbox', [assignment('D'), null, 'T'])).toBe(5003);
    });
  });
});
