// The checkpointer on a real SQLite file: the WAL does not keep growing, nor keep the space of a
// spike, when the writer never pauses or a reader held it back for a while.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Checkpointer } from '../../db/checkpointer';
import { truncateNeeded } from '../../db/wal-limits';
import { Writer } from '../../db/writer';
import type { VerifyDto } from '../../lib/messages';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B'.repeat(200), Destination: 'D1', MessageCode: 212 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('truncateNeeded', () => {
  const limits = { maxBytes: 1000, freeShare: 0.25, truncateWaitMs: 100, busyBackoffMs: 1000 };
  it('past the size limit, or past a share of the free space; never for an empty WAL', () => {
    expect(truncateNeeded(1001, 1e12, limits)).toBe(true);
    expect(truncateNeeded(999, 1e12, limits)).toBe(false);
    expect(truncateNeeded(300, 1000, limits)).toBe(true); // a small disk: 300 > 1000 / 4
    expect(truncateNeeded(0, 0, limits)).toBe(false);
    expect(truncateNeeded(300, 1000, { ...limits, freeShare: 0 })).toBe(false);
  });
});

describe('Checkpointer', () => {
  it('empties a WAL that grew past its limit while a reader held it back, once the reader is gone', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-checkpoint-'));
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    const limit = 256 * 1024;
    const checkpointer = Checkpointer.start(file, 50, { maxBytes: limit, freeShare: 0, truncateWaitMs: 20, busyBackoffMs: 200 });
    const walSize = () => fs.statSync(`${file}-wal`).size;
    // An operator's open read transaction: the WAL cannot start over while it lasts.
    const reader = new Database(file, { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM sortation_queue').get();
      let n = 0;
      const writeFor = async (ms: number) => {
        for (const end = Date.now() + ms; Date.now() < end; ) await Promise.all(Array.from({ length: 20 }, () => writer.run('enqueue', [[verify(String(n++))], 'T'])));
      };
      await writeFor(800);
      const grown = walSize();
      expect(grown).toBeGreaterThan(2 * limit);
      reader.exec('COMMIT');
      reader.close();
      // The writer goes on; within a few intervals the WAL is emptied and stays near its limit.
      await writeFor(600);
      let max = 0;
      for (let i = 0; i < 10; i++) {
        await writeFor(50);
        max = Math.max(max, walSize());
      }
      expect(max).toBeLessThan(grown);
      await sleep(200);
      expect(walSize()).toBeLessThanOrEqual(limit * 2);
    } finally {
      if (reader.open) reader.close();
      await checkpointer.stop();
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
