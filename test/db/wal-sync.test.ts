// The WAL sync ledger (db/wal-sync.ts) on its own, on a file standing in for the WAL: one sync at
// a time, what waits for the next, early answers (AckUnsyncedAfterMs), writes durable another way.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sharedClockMs } from '../../db/storage-status';
import { type Owed, WalSync } from '../../db/wal-sync';
import { type FromWriter, Cancel, Field, STATUS_FIELDS, StatusFields } from '../../db/writer-protocol';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-wal-sync-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A ledger over `${dir}/q.db-wal` (created unless `noWal`), with what it posted and how often a sync ended. */
function ledger(earlyAfterMs: number | null = null, noWal = false) {
  const file = path.join(dir, 'q.db');
  if (!noWal) fs.writeFileSync(`${file}-wal`, 'frames');
  const buffer = new SharedArrayBuffer(STATUS_FIELDS * 8);
  const posted: FromWriter[] = [];
  let ended = 0;
  let onEnd: () => void = () => {};
  const wal = new WalSync({
    file,
    earlyAfterMs,
    slowSyncMs: 60_000,
    status: new StatusFields(buffer, sharedClockMs),
    post: (m) => posted.push(m),
    onSyncEnded: () => {
      ended += 1;
      onEnd();
    },
  });
  const field = (f: Field) => Number(new BigInt64Array(buffer)[f]);
  const syncEnds = () => new Promise<void>((resolve) => (onEnd = resolve));
  return { wal, posted, field, ended: () => ended, syncEnds };
}

const owed = (seq: number, over: Partial<Owed> = {}): Owed => ({ seq, flag: null, due: performance.now(), earlyAt: Infinity, ...over });
const synced = (posted: FromWriter[]) => posted.filter((m): m is Extract<FromWriter, { type: 'synced' }> => m.type === 'synced');

describe('syncs beside the thread', () => {
  it('syncs once for every write owed so far, tells them synced as it ends, and counts the sync', async () => {
    const { wal, posted, field, ended, syncEnds } = ledger();
    wal.owe([owed(1), owed(2)]);
    const end = syncEnds();
    wal.startSync();
    expect(wal.inFlight).toBe(true);
    expect(wal.owes).toBe(false);
    await end;
    expect(synced(posted)).toEqual([{ type: 'synced', seqs: [1, 2], failure: null }]);
    expect([wal.inFlight, ended(), field(Field.SyncedCommits), field(Field.SyncSince)]).toEqual([false, 1, 1, 0]);
    wal.close();
  });

  it('one sync at a time: what is owed meanwhile waits for the next, and no sync is due while one is in flight', async () => {
    const { wal, posted, syncEnds } = ledger();
    wal.owe([owed(1)]);
    const end = syncEnds();
    wal.startSync();
    wal.owe([owed(2)]);
    wal.startSync(); // in flight: nothing starts
    expect([wal.syncDue(performance.now(), true), wal.owedDue()]).toEqual([false, Infinity]);
    await end;
    expect(synced(posted).map((m) => m.seqs)).toEqual([[1]]);
    expect(wal.syncDue(performance.now(), false)).toBe(true);
    const next = syncEnds();
    wal.startSync();
    await next;
    expect(synced(posted).map((m) => m.seqs)).toEqual([[1], [2]]);
    wal.close();
  });

  it('a WAL that cannot be opened fails the writes owed, with the reason', () => {
    const { wal, posted, ended } = ledger(null, true);
    wal.owe([owed(7)]);
    wal.startSync();
    expect(wal.inFlight).toBe(false);
    expect(synced(posted)).toEqual([{ type: 'synced', seqs: [7], failure: expect.stringMatching(/^ENOENT: /) }]);
    expect(ended()).toBe(0);
  });
});

describe('owed writes', () => {
  it('are due once the oldest is due, or at once when closing', () => {
    const { wal } = ledger();
    const now = performance.now();
    wal.owe([owed(1, { due: now + 100 })]);
    expect([wal.syncDue(now, false), wal.syncDue(now, true), wal.syncDue(now + 100, false), wal.owedDue()]).toEqual([
      false,
      true,
      true,
      now + 100,
    ]);
  });

  it('are owed no sync once the main thread says they are durable another way (the sorter acknowledged the entry)', () => {
    const { wal } = ledger();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    wal.owe([owed(1, { flag })]);
    Atomics.store(flag, 0, Cancel.DurableElsewhere);
    wal.forgetDurableElsewhere();
    expect(wal.owes).toBe(false);
  });

  it('without Synchronous FULL are told synced at once, with no sync', () => {
    const { wal, posted, field } = ledger();
    wal.owe([owed(3)]);
    wal.settleWithoutSync();
    expect(synced(posted)).toEqual([{ type: 'synced', seqs: [3], failure: null }]);
    expect(field(Field.SyncedCommits)).toBe(0);
  });

  it('a sync on the thread (a stop) takes what is owed, and syncs even with nothing owed when asked to', () => {
    const { wal, posted, field } = ledger();
    wal.syncNow();
    expect(field(Field.SyncedCommits)).toBe(0);
    wal.syncNow(true);
    wal.owe([owed(4)]);
    wal.syncNow();
    expect(synced(posted)).toEqual([{ type: 'synced', seqs: [4], failure: null }]);
    expect(field(Field.SyncedCommits)).toBe(2);
    wal.close();
  });
});

describe('early answers (AckUnsyncedAfterMs)', () => {
  it('a sorter telegram is answered without its sync once its time came, once, and counted apart', () => {
    const { wal, posted, field } = ledger(100);
    const now = performance.now();
    wal.owe([owed(1, { earlyAt: now + 100 }), owed(2)]);
    expect(wal.earlyDue()).toBe(now + 100);
    wal.answerEarly(now + 50);
    expect(synced(posted)).toEqual([]);
    wal.answerEarly(now + 100);
    wal.answerEarly(now + 200);
    expect(synced(posted)).toEqual([{ type: 'synced', seqs: [1], failure: null }]);
    expect([field(Field.AnsweredBeforeSync), wal.earlyDue()]).toEqual([1, Infinity]);
  });

  it('none without AckUnsyncedAfterMs', () => {
    const { wal, posted } = ledger(null);
    wal.owe([owed(1, { earlyAt: 0.5 })]);
    wal.answerEarly(performance.now() + 1e6);
    expect([synced(posted), wal.earlyDue(), wal.stalled(performance.now() + 1e6)]).toEqual([[], Infinity, false]);
  });

  it('while a sync has been in flight that long the disk stalls: telegrams committed meanwhile are answered at once', async () => {
    const { wal, posted, syncEnds } = ledger(100);
    wal.owe([owed(1)]);
    const end = syncEnds();
    wal.startSync();
    const now = performance.now();
    expect(wal.stalled(now)).toBe(false);
    wal.owe([owed(2, { earlyAt: now + 100_000 })]);
    wal.answerEarly(now + 150);
    expect(wal.stalled(now + 150)).toBe(true);
    expect(synced(posted)).toEqual([{ type: 'synced', seqs: [2], failure: null }]);
    await end;
    wal.close();
  });
});
