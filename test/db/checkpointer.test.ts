// The checkpointer on a real SQLite file: the WAL does not keep growing, nor keep the space of a
// spike, when the writer never pauses or a reader held it back for a while; with nothing written
// the thread sleeps, and the next commit wakes it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../db/sqlite';
import { Checkpointer } from '../../db/checkpointer';
import { PAGE_SIZE } from '../../db/connection';
import { THREAD_NAMES } from '../../lib/host/thread-name';
import { Writer } from '../../db/writer';
import type { VerifyDto } from '../../model/messages';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B'.repeat(200), Destination: 'D1', MessageCode: 212 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The loops below wait for what they test, longer on a busy machine.
jest.setTimeout(30_000);

describe('Checkpointer', () => {
  it('makes a WAL that the writer never lets rest start over every restartBytes, in the blocks the file already has', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-checkpoint-'));
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    // Below what one turn of the loop below appends (20 rows of over 200 bytes), so that the WAL
    // passes it whether or not a PASSIVE copy caught up between two turns (SQLite then starts the
    // WAL over by itself at the next write, as a busy or slow machine shows).
    const restartBytes = 4 * 1024;
    const checkpointer = Checkpointer.start(file, (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]), 50, {
      restartBytes,
      maxBytes: 1024 * 1048576,
      freeShare: 0,
      writerWaitMs: 100,
      busyBackoffMs: 200,
    });
    // The WAL header's salt changes each time the WAL starts over from its beginning; the
    // wal-index (the -shm file) says how many frames it holds since (mxFrame, at byte 16).
    const read = (name: string, bytes: number) => {
      const fd = fs.openSync(name, 'r');
      try {
        const b = Buffer.alloc(bytes);
        fs.readSync(fd, b, 0, bytes, 0);
        return { b, size: fs.fstatSync(fd).size };
      } finally {
        fs.closeSync(fd);
      }
    };
    const header = () => {
      const wal = read(`${file}-wal`, 32);
      return { salt: wal.b.readUInt32BE(16), size: wal.size, frames: read(`${file}-shm`, 20).b.readUInt32LE(16) };
    };
    try {
      let n = 0;
      const salts = new Set<number>();
      let maxSize = 0;
      let shrunk = 0;
      // Frames appended in all, over the start-overs seen.
      let appended = 0;
      let last = header();
      const started = Date.now();
      // Until the WAL has started over several times and the writer has appended well over its
      // largest size (by what happens, not by the clock: a slow or busy machine writes for longer,
      // and a checkpoint thread it held back for a moment leaves one long stretch between two
      // start-overs). Without start-overs it keeps one salt, and a WAL that kept growing keeps its
      // size near all that was appended, until the time limit.
      const written = () => appended * (PAGE_SIZE + 24);
      while ((salts.size < 10 || written() < 2.5 * maxSize) && Date.now() - started < 15_000) {
        await Promise.all(Array.from({ length: 20 }, () => writer.run('enqueue', [[verify(String(n++))], 'T'])));
        const h = header();
        appended += h.salt === last.salt ? Math.max(0, h.frames - last.frames) : h.frames;
        last = h;
        salts.add(h.salt);
        if (h.size < maxSize) shrunk++;
        maxSize = Math.max(maxSize, h.size);
      }
      const appendedBytes = written();
      expect(salts.size).toBeGreaterThanOrEqual(10);
      // Bounded: the threshold plus what the writer adds before the next check, not all it wrote.
      expect(maxSize).toBeLessThan(appendedBytes / 2);
      // Reused, not emptied: the file keeps the blocks it has, at every look.
      expect(shrunk).toBe(0);
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
    const checkpointer = Checkpointer.start(file, (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]), 50, {
      restartBytes: 1024 * 1048576,
      maxBytes: limit,
      freeShare: 0,
      writerWaitMs: 20,
      busyBackoffMs: 200,
    });
    const walSize = () => fs.statSync(`${file}-wal`).size;
    // An operator's open read transaction: the WAL cannot start over while it lasts.
    const reader = new Database(file, { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM sortation_queue').get();
      let n = 0;
      const writeFor = async (ms: number) => {
        for (const end = Date.now() + ms; Date.now() < end;)
          await Promise.all(Array.from({ length: 20 }, () => writer.run('enqueue', [[verify(String(n++))], 'T'])));
      };
      // Until the WAL is well past its limit (by size, not by the clock: CI machines differ).
      for (const end = Date.now() + 15_000; walSize() <= 3 * limit && Date.now() < end;) await writeFor(50);
      const grown = walSize();
      expect(grown).toBeGreaterThan(2 * limit);
      reader.exec('COMMIT');
      reader.close();
      // The writer goes on; the WAL is emptied (within a few intervals, longer on a busy machine)
      // (how far it grows back meanwhile depends on the machine's load: not asserted) ...
      let shrunk = false;
      for (const end = Date.now() + 15_000; !shrunk && Date.now() < end;) {
        await writeFor(50);
        shrunk = walSize() < grown;
      }
      expect(shrunk).toBe(true);
      // ... and once the writer rests, it is back within its limit.
      for (const end = Date.now() + 5_000; walSize() > limit * 2 && Date.now() < end;) await sleep(50);
      expect(walSize()).toBeLessThanOrEqual(limit * 2);
    } finally {
      if (reader.open) reader.close();
      await checkpointer.stop();
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('copies only every intervalMs; between two copies it still empties a WAL that endangers the disk', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-checkpoint-'));
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    const limit = 256 * 1024;
    const asked: string[] = [];
    // No copy within the test (a minute); the disk looked at every 50 ms. A copy would make a WAL
    // past restartBytes (1 KB) start over at once, so it would never reach the limit.
    const checkpointer = Checkpointer.start(
      file,
      (mode, waitMs) => (asked.push(mode), writer.run('checkpoint', [mode, waitMs])),
      60_000,
      { restartBytes: 1024, maxBytes: limit, freeShare: 0, writerWaitMs: 20, busyBackoffMs: 200 },
      50,
    );
    const walSize = () => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);
    try {
      let n = 0;
      let largest = 0;
      for (const end = Date.now() + 15_000; !asked.includes('TRUNCATE') && Date.now() < end;) {
        await Promise.all(Array.from({ length: 20 }, () => writer.run('enqueue', [[verify(String(n++))], 'T'])));
        largest = Math.max(largest, walSize());
      }
      expect(asked).toContain('TRUNCATE');
      expect(asked).not.toContain('RESTART'); // decided only when it copies
      expect(largest).toBeGreaterThan(limit);
      for (const end = Date.now() + 5_000; walSize() > limit && Date.now() < end;) await sleep(50);
      expect(walSize()).toBeLessThanOrEqual(limit);
    } finally {
      await checkpointer.stop();
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  const onLinux = fs.existsSync('/proc/thread-self/comm') ? it : it.skip;
  onLinux('sleeps once a copy left nothing behind and nothing was written (no wake-ups), and folds the next commit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-checkpoint-'));
    const file = path.join(dir, 'q.db');
    const writer = await Writer.start({ file, synchronous: 'NORMAL', groupCommit: true });
    const checkpointer = Checkpointer.start(file, (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]), 50, {
      restartBytes: 1024 * 1048576,
      maxBytes: 1024 * 1048576,
      freeShare: 0,
      writerWaitMs: 20,
      busyBackoffMs: 200,
    });
    // The checkpoint thread's voluntary context switches (each wake-up is one), from /proc.
    const switches = () =>
      fs
        .readdirSync('/proc/self/task')
        .filter((t) => fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() === THREAD_NAMES.checkpointer)
        .reduce(
          (n, t) => n + Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/self/task/${t}/status`, 'utf8'))![1]),
          0,
        );
    // The wal-index: frames in the WAL (mxFrame, byte 16) and frames copied back (nBackfill, byte 96).
    const frames = () => {
      const shm = fs.readFileSync(`${file}-shm`);
      return { inWal: shm.readUInt32LE(16), copied: shm.readUInt32LE(96) };
    };
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => writer.run('enqueue', [[verify(String(i))], 'T'])));
      for (const end = Date.now() + 5_000; frames().copied < frames().inWal && Date.now() < end;) await sleep(20);
      expect(frames().copied).toBe(frames().inWal);
      await sleep(500); // two intervals without a commit: asleep
      const before = switches();
      await sleep(1000); // awake, it would look 20 times
      expect(switches() - before).toBeLessThanOrEqual(2);
      // A commit wakes it (its WAL write), and the frames are copied back.
      await writer.run('enqueue', [[verify('after')], 'T']);
      const written = frames().inWal;
      expect(frames().copied).toBeLessThan(written);
      for (const end = Date.now() + 5_000; frames().copied < written && Date.now() < end;) await sleep(20);
      expect(frames().copied).toBeGreaterThanOrEqual(written);
    } finally {
      await checkpointer.stop();
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
