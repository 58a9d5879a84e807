// The slow-disk mode: builds the LD_PRELOAD shim (bench/slow-fsync.c) and the environment that
// loads it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../lib/process/paths';

/** The slow-disk shim's source (bench/slow-fsync.c) and where its build goes. */
const SOURCE = path.join(projectRoot, 'bench', 'slow-fsync.c');
const LIBRARY = path.join(projectRoot, 'dist', 'bench', 'slow-fsync.so');

/**
 * The LD_PRELOAD library that delays fsync/fdatasync, built with the system C compiler the
 * first time it is needed (and again when its source changed). Linux only.
 */
export function slowFsyncLibrary(): string {
  if (process.platform !== 'linux') throw new Error('the slow-disk mode needs Linux (LD_PRELOAD)');
  const stale = !fs.existsSync(LIBRARY) || fs.statSync(LIBRARY).mtimeMs < fs.statSync(SOURCE).mtimeMs;
  if (stale) {
    fs.mkdirSync(path.dirname(LIBRARY), { recursive: true });
    execFileSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-O2', '-o', LIBRARY, SOURCE, '-ldl'], { stdio: 'inherit' });
  }
  return LIBRARY;
}

/** Environment for a child process whose fsync calls take `delayMs` longer (0: unchanged). */
export function slowFsyncEnv(delayMs: number): NodeJS.ProcessEnv {
  if (delayMs <= 0) return {};
  return { LD_PRELOAD: slowFsyncLibrary(), SORTER_FSYNC_DELAY_MS: String(delayMs) };
}
