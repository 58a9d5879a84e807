// The checkpoint thread (db/checkpointer.ts starts it): folds the WAL back into the database file,
// and keeps the WAL from growing without bound.
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import Database, { dataVersionReader, pragmaNumber } from './sqlite';
import { freeBytes } from '../lib/host/disk';
import { type WalLimits, checkpointNeeded, walCheckpoint } from './wal-limits';
import { THREAD_NAMES, nameThisThread } from '../lib/host/thread-name';

if (!parentPort) throw new Error('db/checkpoint-worker.ts runs as a worker thread (db/checkpointer.ts)');
const parent = parentPort;
// It keeps the process's priority, as the writer does: a starved checkpoint would let the WAL grow.
nameThisThread(THREAD_NAMES.checkpointer);

const { file, intervalMs, checkMs, limits } = workerData as { file: string; intervalMs: number; checkMs: number; limits: WalLimits };
const db = new Database(file, { fileMustExist: true });
db.pragma('cache_size = -256'); // it copies pages through; a large cache would only cost memory
const frameBytes = pragmaNumber(db, 'page_size') + 24; // a WAL frame: page + header
/** PASSIVE checkpoints in a row while the writer keeps adding frames. */
const PASSIVE_TRIES = 3;

const checkpoint = (mode: 'PASSIVE') => walCheckpoint(db, mode);

const walFileBytes = (): number => {
  try {
    return fs.statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};

/**
 * PASSIVE copies what it can while the writer goes on committing (it takes no write lock), so its
 * disk syncs never lengthen a commit. But the WAL only starts over from its beginning when the
 * writer begins a transaction with every frame copied, which a busy writer seldom does; meanwhile
 * the file grows (about 1.4 MB a second at 50 items/s on a slow disk), and every commit that grows
 * it costs the file system a journal commit too. So: PASSIVE a few times in a row to catch up;
 * then, once the WAL holds `restartBytes` since it last started over, ask for a RESTART, and when
 * the file endangers the disk (more than a quarter of its free space: a full disk, where the WAL
 * took the space the database file needs to grow, so no checkpoint completes; or more than 1 GB)
 * for a TRUNCATE. Both need the write lock, which a busy writer takes again within microseconds
 * of each commit: tried from here they starve (measured: a RESTART never got it in 100 ms at 50
 * items/s with fsync +20 ms). So the writer runs them itself, between two transactions
 * (db/checkpointer.ts passes the request on).
 */
function run(): boolean {
  let r = checkpoint('PASSIVE');
  for (let i = 1; i < PASSIVE_TRIES && r.log > r.checkpointed && r.busy === 0; i++) r = checkpoint('PASSIVE');
  const mode = checkpointNeeded(r.log * frameBytes, walFileBytes(), freeBytes(path.dirname(file)) ?? Infinity, limits);
  if (mode) parent.postMessage({ mode });
  return r.log === r.checkpointed && !mode;
}

/** Between two copies: only whether the WAL file endangers the disk (a TRUNCATE), from its size. */
function guard(): void {
  if (checkpointNeeded(0, walFileBytes(), freeBytes(path.dirname(file)) ?? Infinity, limits) === 'TRUNCATE')
    parent.postMessage({ mode: 'TRUNCATE' });
}

/** Changes whenever another connection (the writer) commits. */
const dataVersion = dataVersionReader(db);

/**
 * Checks between two copies, and the one that copies. Once a copy left nothing behind and a whole
 * interval passed without a commit, the thread sleeps: no timer, only a watch on the WAL file
 * (inotify), which the next commit's write ends. A WAL grows only by commits, so there is nothing
 * to copy or guard meanwhile; looking every second regardless kept an idle service awake.
 */
const copyEvery = Math.max(1, Math.round(intervalMs / checkMs));
let tick = 0;
let seen = dataVersion();
let copiedAll = false;
let timer: NodeJS.Timeout | null = null;
let watcher: fs.FSWatcher | null = null;

function onTick(): void {
  try {
    tick += 1;
    if (tick % copyEvery !== 0) return guard();
    const version = dataVersion();
    if (version === seen && copiedAll) return sleep();
    seen = version;
    copiedAll = run();
  } catch {
    // A full disk, a lock held elsewhere: tried again at the next interval; the hourly
    // housekeeping checkpoint reports failures.
    copiedAll = false;
  }
}

function sleep(): void {
  if (timer) clearInterval(timer);
  timer = null;
  try {
    watcher = fs.watch(`${file}-wal`, wake);
    watcher.on('error', wake);
  } catch {
    return wake(); // no WAL file to watch: keep looking
  }
  // A commit between the last look and the watch is seen here rather than missed.
  if (dataVersion() !== seen) wake();
}

function wake(): void {
  watcher?.close();
  watcher = null;
  if (timer) return;
  tick = 0;
  copiedAll = false;
  timer = setInterval(onTick, checkMs);
}

wake();
parent.on('message', () => {
  if (timer) clearInterval(timer);
  watcher?.close();
  db.close();
  parent.close();
});
