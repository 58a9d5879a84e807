// The checkpointer: a thread that folds the WAL back into the database file once a second,
// outside every commit.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { projectRoot } from '../lib/paths';
import { WAL_LIMITS, type WalLimits } from './wal-limits';

/** How often the WAL is folded back into the database file (ms). */
export const CHECKPOINT_INTERVAL_MS = 1000;

/**
 * Checkpoints on their own thread. SQLite's automatic checkpoint runs inside the commit that
 * crosses 1,000 WAL pages, adding two disk syncs to it: on slow storage that commit, and every
 * write queued behind it, waited (measured at fsync +20 ms: decision p99 137 ms with it, 89 ms
 * without). The writer therefore turns it off, and this thread checkpoints every second,
 * emptying the WAL when it grows too large (db/checkpoint-worker.ts).
 */
export class Checkpointer {
  private constructor(private readonly worker: Worker) {}

  /** Start checkpointing `file` (already created and migrated by the writer). */
  static start(file: string, intervalMs = CHECKPOINT_INTERVAL_MS, limits: WalLimits = WAL_LIMITS): Checkpointer {
    const worker = new Worker(path.join(projectRoot, 'dist', 'db', 'checkpoint-worker.js'), {
      workerData: { file, intervalMs, limits },
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    return new Checkpointer(worker);
  }

  /** Stop and close the connection. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.worker.once('exit', () => resolve());
      this.worker.postMessage('stop');
    });
  }
}
