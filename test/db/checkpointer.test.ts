// The checkpointer on a real SQLite file: the WAL does not keep growing, nor keep the space of a
// spike, when the writer never pauses or a reader held it back for a while.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Checkpointer } from '../../db/checkpointer';
import { checkpointNeeded } from '../../db/wal-limits';
import { Writer } from '../../db/writer';
import type { VerifyDto } from '../../lib/messages';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B'.repeat(200), Destination: 'D1', MessageCode: 212 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('checkpointNeeded', () => {
  const limits = { restartBytes: 100, maxBytes: 1000, freeShare: 0.25, writerWaitMs: 100, busyBackoffMs: 1000 };
  it('TRUNCATE for a file past the size limit or past a share of the free space; never for an empty file', () => {
    expect(checkpointNeeded(0, 1001, 1e12, limits)).toBe('TRUNCATE');
    expect(checkpointNeeded(0, 300, 1000, limits)).toBe('TRUNCATE'); // a small disk: 300 > 1000 / 4
    expect(checkpointNeeded(0, 0, 0, limits)).toBe(null);
    expect(checkpointNeeded(0, 300, 1000, { ...limits, freeShare: 0 })).toBe(null);
  });
  it('RESTART once the WAL holds restartBytes since it last started over, whatever the size of the file', () => {
    expect(checkpointNeeded(100, 999, 1e12, limits)).toBe('RESTART');
    expect(checkpointNeeded(99, 999, 1e12, limits)).toBe(null);
    expect(checkpointNeeded(100, 2000, 1e12, limits)).toBe('TRUNCATE');
  });
});

describe('Checkpointer', () => {
  it('makes a WAL that the writer never lets rest start over every restartBytes, in the blocks the file already has', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-checkpoint-'));
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    const restartBytes = 128 * 1024;
    const checkpointer = Checkpointer.start(file, (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]), 50, { restartBytes, maxBytes: 1024 * 1048576, freeShare: 0, writerWaitMs: 100, busyBackoffMs: 200 });
    // The WAL header's salt changes each time the WAL starts over from its beginning.
    const header = () => {
      const fd = fs.openSync(`${file}-wal`, 'r');
      try {
        const b = Buffer.alloc(32);
        fs.readSync(fd, b, 0, 32, 0);
        return { salt: b.readUInt32BE(16), size: fs.fstatSync(fd).size };
      } finally {
        fs.closeSync(fd);
      }
    };
    try {
      let n = 0;
      const salts = new Set<number>();
      let maxSize = 0;
      let written = 0;
      for (const end = Date.now() + 2000; Date.now() < end; ) {
        await Promise.all(Array.from({ length: 20 }, () => writer.run('enqueue', [[verify(String(n++))], 'T'])));
        written += 20 * 250;
        const h = header();
        salts.add(h.salt);
        maxSize = Math.max(maxSize, h.size);
      }
      expect(written).toBeGreaterThan(20 * restartBytes); // enough traffic to need many start-overs
      expect(salts.size).toBeGreaterThanOrEqual(4);
      // Bounded: what one interval adds on top of the threshold, not everything written.
      expect(maxSize).toBeLessThan(written / 4);
      // Reused, not emptied: the file keeps the blocks it has.
      expect(header().size).toBeGreaterThanOrEqual(restartBytes);
    } finally {
      await checkpointer.stop();
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('empties a WAL that grew past its limit while a reader held it back, once the reader is gone', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-checkpoint-'));
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    const limit = 256 * 1024;
    const checkpointer = Checkpointer.start(file, (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]), 50, { restartBytes: 1024 * 1048576, maxBytes: limit, freeShare: 0, writerWaitMs: 20, busyBackoffMs: 200 });
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
