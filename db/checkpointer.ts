// The checkpointer: a thread that folds the WAL back into the database file every few seconds,
// outside every commit, and watches every second that the WAL does not endanger the disk; while
// nothing is written it sleeps (db/checkpoint-worker.ts).
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { projectRoot } from '../lib/host/root';
import { setWorkerSemiSpace } from '../lib/internals/node';
import { WAL_LIMITS, type WalLimits } from './wal-limits';
import { WORKER_SEMI_SPACE_MB } from './writer';

/**
 * How often the WAL is folded back into the database file (ms). Each fold copies every page
 * changed since the last one (the same hot pages each time: the queue's tail, link_state, the
 * history's last pages) and syncs the database file, and lets the next commit start the WAL over,
 * which syncs its header: measured at 30 items/s with npm run wal-pages, folding every 5 s instead
 * of every second wrote 26.1 -> 24.2 KB and 2.36 -> 2.27 syncs an item. Longer does not pay: the
 * pages the history adds must be copied once whatever the interval.
 */
const CHECKPOINT_INTERVAL_MS = 5000;

/** How often the thread looks whether the WAL file endangers the disk (ms; at most the fold's interval). */
export const WAL_CHECK_INTERVAL_MS = 1000;

/** A checkpoint that needs the write lock, run by the writer between two transactions. */
export type LockingCheckpoint = (mode: 'RESTART' | 'TRUNCATE', waitMs: number) => Promise<{ busy: boolean }>;

/**
 * Checkpoints on their own thread. SQLite's automatic checkpoint runs inside the commit that
 * crosses 1,000 WAL pages, adding two disk syncs to it: on slow storage that commit, and every
 * write queued behind it, waited (measured at fsync +20 ms: decision p99 137 ms with it, 89 ms
 * without). The writer therefore turns it off, and this thread copies the WAL into the database
 * file every `intervalMs` (PASSIVE, no lock), looking every second between two copies whether the
 * WAL file endangers the disk, and sleeping once a copy left nothing and an interval passed
 * without a commit, until the next commit writes the WAL. When the WAL must start over or be emptied
 * (db/wal-limits.ts), the thread asks, and the request goes to `locking`: the writer runs it
 * between two transactions, waiting `writerWaitMs` at most for readers. One at a time; after one
 * found a reader in the way (an operator's open read), none for `busyBackoffMs`.
 */
export class Checkpointer {
  private inFlight = false;
  private notBefore = 0;

  private constructor(
    private readonly worker: Worker,
    private readonly locking: LockingCheckpoint,
    private readonly limits: WalLimits,
  ) {
    worker.on('message', (m: { mode?: 'RESTART' | 'TRUNCATE' }) => {
      if (m.mode) this.request(m.mode);
    });
  }

  /** Start checkpointing `file` (already created and migrated by the writer). */
  static start(
    file: string,
    locking: LockingCheckpoint,
    intervalMs = CHECKPOINT_INTERVAL_MS,
    limits: WalLimits = WAL_LIMITS,
    checkMs = Math.min(WAL_CHECK_INTERVAL_MS, intervalMs),
  ): Checkpointer {
    setWorkerSemiSpace(WORKER_SEMI_SPACE_MB);
    const worker = new Worker(path.join(projectRoot, 'dist', 'db', 'checkpoint-worker.js'), {
      workerData: { file, intervalMs, checkMs, limits },
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    return new Checkpointer(worker, locking, limits);
  }

  private request(mode: 'RESTART' | 'TRUNCATE'): void {
    if (this.inFlight || Date.now() < this.notBefore) return;
    this.inFlight = true;
    this.locking(mode, this.limits.writerWaitMs)
      .then(
        (r) => {
          if (r.busy) this.notBefore = Date.now() + this.limits.busyBackoffMs;
        },
        // A full disk, the writer closing: asked again at a later interval; the hourly
        // housekeeping checkpoint reports failures.
        () => {},
      )
      .finally(() => (this.inFlight = false));
  }

  /** Stop and close the connection. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.worker.once('exit', () => resolve());
      this.worker.postMessage('stop');
    });
  }
}
