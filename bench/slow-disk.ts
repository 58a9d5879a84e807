// The slow-disk mode, the sync stalls and the sync counter: builds the LD_PRELOAD shim
// (bench/slow-fsync.c) and the environment that loads it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../lib/process/paths';

/** The slow-disk shim's source (bench/slow-fsync.c) and where its build goes. */
const SOURCE = path.join(projectRoot, 'bench', 'slow-fsync.c');
const LIBRARY = path.join(projectRoot, 'dist', 'bench', 'slow-fsync.so');

/**
 * The LD_PRELOAD library that delays and counts fsync/fdatasync, built with the system C
 * compiler the first time it is needed (and again when its source changed). Linux only.
 */
export function slowFsyncLibrary(): string {
  if (process.platform !== 'linux') throw new Error('the slow-disk mode needs Linux (LD_PRELOAD)');
  const stale = !fs.existsSync(LIBRARY) || fs.statSync(LIBRARY).mtimeMs < fs.statSync(SOURCE).mtimeMs;
  if (stale) {
    fs.mkdirSync(path.dirname(LIBRARY), { recursive: true });
    execFileSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-O2', '-o', LIBRARY, SOURCE, '-ldl', '-lpthread'], { stdio: 'inherit' });
  }
  return LIBRARY;
}

/** Environment for a child process whose fsync calls take `delayMs` longer (0: unchanged). */
export function slowFsyncEnv(delayMs: number): NodeJS.ProcessEnv {
  if (delayMs <= 0) return {};
  return { LD_PRELOAD: slowFsyncLibrary(), SORTER_FSYNC_DELAY_MS: String(delayMs) };
}

/** An SD card's stalls: every `everyS` seconds one sync takes `ms` longer, and the syncs behind it wait for it. */
export interface SyncStall {
  ms: number;
  everyS: number;
}

/** `MS/EVERY_S` (e.g. `1000/10`) as a stall; otherwise a sentence saying what is wrong. */
export function parseSyncStall(text: string): SyncStall | string {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  const [ms, everyS] = m ? [Number(m[1]), Number(m[2])] : [Number.NaN, Number.NaN];
  if (!m || ms <= 0 || everyS <= 0)
    return `takes MS/EVERY_S, two positive numbers (a stall of MS milliseconds every EVERY_S seconds), e.g. 1000/10; got ${JSON.stringify(text)}`;
  // A stall as long as its period would leave the disk stalled for good: no sync would ever end.
  if (ms >= everyS * 1000) return `takes a stall shorter than its period (MS < EVERY_S x 1000), e.g. 1000/10; got ${JSON.stringify(text)}`;
  return { ms, everyS };
}

/** The shim's setting for `stall` (SORTER_FSYNC_STALL), as the shim reads it. */
const stallSetting = (stall: SyncStall) => `${stall.ms}/${stall.everyS}`;

/** Environment for a child process whose syncs stall as `stall` says (and are `delayMs` slower each). */
export function syncStallEnv(stall: SyncStall, delayMs = 0): NodeJS.ProcessEnv {
  return { LD_PRELOAD: slowFsyncLibrary(), SORTER_FSYNC_DELAY_MS: String(Math.max(0, delayMs)), SORTER_FSYNC_STALL: stallSetting(stall) };
}

/** The fsync and fdatasync calls a process made, counted by the shim (SyncCounter), and the stalls it started. */
export interface SyncCount {
  fsync: number;
  fdatasync: number;
  stalls: number;
}

/**
 * Counts every fsync and fdatasync of a child process (all its threads: the writer's commits,
 * the checkpoints, the traffic log): `env` loads the shim with `delayMs` more per sync, and
 * `read()` gives the counts so far. The counters live in a small file on tmpfs (/dev/shm where
 * there is one), so counting writes nothing to the disk being measured. With `snapshotDir`, the
 * shim also copies each database and WAL file there as it was at its last sync: what a power cut
 * would leave of them if the disk kept nothing unsynced. With `stall`, its syncs also stall
 * (SORTER_FSYNC_STALL), and `read().stalls` counts the stalls.
 */
export class SyncCounter {
  readonly file: string;
  readonly env: NodeJS.ProcessEnv;

  constructor(delayMs = 0, snapshotDir?: string, stall?: SyncStall) {
    const dir = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
    this.file = path.join(dir, `sorter-syncs-${process.pid}-${Math.random().toString(36).slice(2)}`);
    fs.writeFileSync(this.file, Buffer.alloc(24));
    this.env = {
      LD_PRELOAD: slowFsyncLibrary(),
      SORTER_FSYNC_DELAY_MS: String(Math.max(0, delayMs)),
      SORTER_FSYNC_COUNT_FILE: this.file,
      ...(snapshotDir ? { SORTER_FSYNC_SNAPSHOT_DIR: snapshotDir } : {}),
      ...(stall ? { SORTER_FSYNC_STALL: stallSetting(stall) } : {}),
    };
  }

  /** The counts so far. */
  read(): SyncCount {
    const b = fs.readFileSync(this.file);
    return { fsync: Number(b.readBigInt64LE(0)), fdatasync: Number(b.readBigInt64LE(8)), stalls: Number(b.readBigInt64LE(16)) };
  }

  /** Both kinds together. */
  total(): number {
    const c = this.read();
    return c.fsync + c.fdatasync;
  }

  /** Remove the counter file. */
  dispose(): void {
    fs.rmSync(this.file, { force: true });
  }
}
