// The writer thread (db/writer-worker.ts, db/writer-thread.ts, db/wal-sync.ts), driven through Writer as the service drives it, on real
// SQLite files: it opens and migrates the database, finds out whether it can write, commits one
// transaction per command or per group, runs checkpoints between transactions, skips what was
// cancelled, and finishes what it was given before it closes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../db/sqlite';
import { defaultMigrationsDir, openReader } from '../../db/connection';
import { readMigrations } from '../../db/migrate';
import { WriteCancelled, WriteFailed, Writer } from '../../db/writer';
import { FLAGS_PER_SLAB } from '../../db/writer-protocol';
import type { VerifyDto } from '../../model/messages';
import { itWhen, missingImmutable } from '../helpers/tools';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-writer-worker-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The track ids in the sortation queue, read by a connection of its own. */
function queued(file: string): string[] {
  const db = openReader(file);
  try {
    return db.prepare('SELECT track_id FROM sortation_queue ORDER BY id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

describe('opening', () => {
  it('creates the file and applies every migration, recorded in user_version', async () => {
    const file = path.join(dir, 'new', 'q.db');
    const writer = await Writer.start({ file, synchronous: 'FULL', groupCommit: true });
    await writer.close();
    const db = openReader(file);
    expect(db.pragma('user_version', { simple: true })).toBe(readMigrations(defaultMigrationsDir).length);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('a file it cannot open, or a migration that fails, rejects the start with the reason', async () => {
    await expect(Writer.start({ file: dir, synchronous: 'FULL', groupCommit: true })).rejects.toThrow(
      new RegExp(`^cannot open ${dir}: .+`),
    );
    const broken = path.join(dir, 'migrations');
    fs.mkdirSync(broken);
    fs.writeFileSync(path.join(broken, '001-broken.sql'), 'CREATE TABLE oops (;');
    await expect(
      Writer.start({ file: path.join(dir, 'q.db'), synchronous: 'FULL', groupCommit: true, migrationsDir: broken }),
    ).rejects.toThrow(/syntax error/);
  });
});

describe('transactions', () => {
  it.each([
    [true, 1],
    [false, 5],
  ])('groupCommit %s: five commands of one turn take %i commit(s), each answered with its own result', async (groupCommit, commits) => {
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit });
    try {
      const before = writer.status();
      const ids = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((t) => writer.run('enqueue', [[verify(t)], 'T'])));
      expect(ids).toEqual([[1], [2], [3], [4], [5]]);
      expect(writer.status()).toMatchObject({ Commits: before.Commits + commits, Writes: before.Writes + 5 });
      expect(queued(file)).toEqual(['a', 'b', 'c', 'd', 'e']);
    } finally {
      await writer.close();
    }
  });

  it('a checkpoint given among writes runs outside their transaction and folds the whole WAL back', async () => {
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    try {
      await writer.run('enqueue', [[verify('before')], 'T']);
      const before = writer.status();
      const [first, checkpoint, second] = await Promise.all([
        writer.run('enqueue', [[verify('a')], 'T']),
        writer.run('checkpoint', ['RESTART']),
        writer.run('enqueue', [[verify('b')], 'T']),
      ]);
      expect([first, second]).toEqual([[2], [3]]);
      // Inside a transaction SQLite refuses to checkpoint (the command would fail): every frame is copied.
      expect(checkpoint.busy).toBe(false);
      expect(checkpoint.walFrames).toBeGreaterThan(0);
      expect(checkpoint.checkpointed).toBe(checkpoint.walFrames);
      // The two writes still share one transaction; the checkpoint is not a write.
      expect(writer.status()).toMatchObject({ Commits: before.Commits + 1, Writes: before.Writes + 2 });
    } finally {
      await writer.close();
    }
  });

  it('skips a command cancelled while it waited for the lock; the commands around it are written', async () => {
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    const operator = new Database(file);
    try {
      operator.exec('BEGIN IMMEDIATE');
      const a = writer.run('enqueue', [[verify('a')], 'T']);
      const b = writer.run('enqueue', [[verify('b')], 'T'], { cancelAfterMs: 50 });
      const c = writer.run('enqueue', [[verify('c')], 'T']);
      await expect(b).rejects.toThrow(WriteCancelled);
      // Given after b was refused, while the writer still holds b: d's cancel flag must not be b's
      // (set Queued again, it would let the writer write b after all).
      const d = writer.run('enqueue', [[verify('d')], 'T'], { cancelAfterMs: 10_000 });
      await sleep(20);
      operator.exec('COMMIT');
      expect([await a, await c]).toEqual([[1], [2]]);
      expect(queued(file)).toEqual(['a', 'c', 'd']);
      expect(await d).toEqual([3]);
      expect(writer.status()).toMatchObject({ Writes: 3, PendingWrites: 0 });
    } finally {
      if (operator.inTransaction) operator.exec('ROLLBACK');
      operator.close();
      await writer.close();
    }
  });

  it('writes that may be cancelled take their flags from shared slabs: a second slab for the 257th at once, the slots serving again after', async () => {
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    try {
      for (const round of ['a', 'b']) {
        const tracks = Array.from({ length: FLAGS_PER_SLAB + 44 }, (_, i) => `${round}${i}`);
        await Promise.all(tracks.map((t) => writer.run('enqueue', [[verify(t)], 'T'], { cancelAfterMs: 10_000 })));
      }
      expect(queued(file)).toHaveLength(2 * (FLAGS_PER_SLAB + 44));
      expect(writer.status()).toMatchObject({ PendingWrites: 0 });
    } finally {
      await writer.close();
    }
  });
});

describe('closing', () => {
  it('commits everything given before close, then refuses new writes', async () => {
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'FULL', groupCommit: true });
    const given = ['a', 'b', 'c'].map((t) => writer.run('enqueue', [[verify(t)], 'T']));
    const closed = writer.close();
    await expect(writer.run('enqueue', [[verify('late')], 'T'])).rejects.toThrow(WriteFailed);
    await expect(writer.run('enqueue', [[verify('late')], 'T'])).rejects.toThrow(/the writer is closing/);
    expect(await Promise.all(given)).toEqual([[1], [2], [3]]);
    await closed;
    expect(queued(file)).toEqual(['a', 'b', 'c']);
  });
});

/** Make a file read-only for this process: by permissions, or for root (who ignores them) by the immutable attribute. */
function makeReadOnly(file: string): () => void {
  if (process.getuid?.() !== 0) {
    fs.chmodSync(file, 0o444);
    return () => fs.chmodSync(file, 0o644);
  }
  execFileSync('chattr', ['+i', file]);
  return () => execFileSync('chattr', ['-i', file]);
}

describe('a read-only database file', () => {
  // Root writes through permissions: only the immutable attribute makes a file read-only for root.
  const readOnlyTest = itWhen(process.getuid?.() === 0 ? missingImmutable() : {}, 'writer thread: a read-only database file, as root');

  readOnlyTest('starts, says so in its status, and fails each write with the reason', async () => {
    const file = path.join(dir, 'q.db');
    const first = await Writer.start({ file, synchronous: 'FULL', groupCommit: true });
    await first.run('enqueue', [[verify('kept')], 'T']);
    await first.close();
    const undo = makeReadOnly(file);
    try {
      const writer = await Writer.start({ file, synchronous: 'FULL', groupCommit: true });
      try {
        expect(writer.status()).toMatchObject({ State: 'Failing', ReadOnly: true, LastError: 'the database file is read-only' });
        const before = writer.status();
        await expect(writer.run('enqueue', [[verify('x')], 'T'])).rejects.toThrow(/SQLITE_READONLY/);
        // Nothing was committed: the failed write is not counted as a commit or a write.
        expect(writer.status()).toMatchObject({ State: 'Failing', Commits: before.Commits, Writes: before.Writes });
      } finally {
        await writer.close();
      }
      expect(queued(file)).toEqual(['kept']);
    } finally {
      undo();
    }
  });
});
