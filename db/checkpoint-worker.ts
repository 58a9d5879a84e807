// The checkpoint thread (db/checkpointer.ts starts it): folds the WAL back into the database file.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -256'); // it copies pages through; a large cache would only cost memory
// PASSIVE: copies what it can while the writer goes on committing (it takes no write lock), so
// its disk syncs never lengthen a commit. A read-only file cannot be checkpointed: nothing to do.
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Tried again at the next interval; the hourly housekeeping checkpoint reports failures.
  }
}, intervalMs);
parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
