// The checkpoint thread (db/checkpointer.ts starts it): folds the WAL back into the database file,
// and keeps the WAL from growing without bound.
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { freeBytes } from '../lib/disk';
import { type WalLimits, truncateNeeded } from './wal-limits';

const { file, intervalMs, limits } = workerData as { file: string; intervalMs: number; limits: WalLimits };
const db = new Database(file, { fileMustExist: true });
db.pragma('cache_size = -256'); // it copies pages through; a large cache would only cost memory
const pageBytes = (db.pragma('page_size', { simple: true }) as number) + 24; // a WAL frame: page + header
/** PASSIVE checkpoints in a row while the writer keeps adding frames. */
const PASSIVE_TRIES = 3;
let notBefore = 0;


const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE') => (db.pragma(`wal_checkpoint(${mode})`) as Array<{ busy: number; log: number; checkpointed: number }>)[0];

/**
 * PASSIVE copies what it can while the writer goes on committing (it takes no write lock), so its
 * disk syncs never lengthen a commit. But the WAL only starts over from its beginning when the
 * writer begins a transaction with every frame copied, which a busy writer seldom does; meanwhile
 * the file grows (about 4 MB a second at 30 items/s). On a full disk that is a deadlock: the WAL
 * has taken the space the checkpoint needs to grow the database file, so it never completes and
 * the WAL never starts over. So: PASSIVE a few times in a row to catch up; if the WAL still holds
 * more than the limit, or more than a quarter of the disk's free space, TRUNCATE: it waits (up to
 * `truncateWaitMs`) for the writer and readers, copies the rest, and empties the file. Only then
 * does a commit wait for a checkpoint (db/wal-limits.ts).
 */
function run(): void {
  let r = checkpoint('PASSIVE');
  for (let i = 1; i < PASSIVE_TRIES && r.log > r.checkpointed && r.busy === 0; i++) r = checkpoint('PASSIVE');
  if (Date.now() < notBefore || !truncateNeeded(r.log * pageBytes, freeBytes(path.dirname(file)) ?? Infinity, limits)) return;
  db.pragma(`busy_timeout = ${limits.truncateWaitMs}`);
  try {
    // A reader in the way (an operator's open read in sqlite3): not again for a while, so that
    // the writer is held up for truncateWaitMs at most once in busyBackoffMs.
    if (checkpoint('TRUNCATE').busy !== 0) notBefore = Date.now() + limits.busyBackoffMs;
  } finally {
    db.pragma('busy_timeout = 0');
  }
}

const timer = setInterval(() => {
  try {
    run();
  } catch {
    // A full disk, a lock held elsewhere: tried again at the next interval; the hourly
    // housekeeping checkpoint reports failures.
  }
}, intervalMs);
parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
