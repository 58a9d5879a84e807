import type { Db } from '../db/connection';

/** A commit less than this long after the previous one means the service is busy. */
const BUSY_MS = 2;

interface Work {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Group commit: writes asked for within one turn of the event loop are committed together in
 * one immediate transaction (one fsync with synchronous=FULL), and each caller learns of its
 * result only after that commit, so nothing is acknowledged before it is durable. Under load
 * the batches grow by themselves: while one commit waits for the disk, the next batch fills.
 * With `enabled` false every write is its own transaction (for comparison in the benchmark).
 */
export class Committer {
  private queue: Work[] = [];
  private scheduled = false;
  private lastFlush = 0;
  /** Transactions committed, and writes they carried (for the benchmark and /status). */
  readonly stats = { Commits: 0, Writes: 0 };

  constructor(
    private readonly db: Db,
    private readonly enabled = true,
  ) {}

  /** Run `fn` inside the next group transaction; resolves with its result once committed. */
  run<T>(fn: () => T): Promise<T> {
    if (!this.enabled) {
      try {
        const result = this.db.transaction(fn).immediate();
        this.stats.Commits += 1;
        this.stats.Writes += 1;
        return Promise.resolve(result);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // Idle: commit at the end of this turn. Busy (the last commit was a moment ago): wait
        // a millisecond so one commit carries more writes (measured in docs/performance.md).
        if (performance.now() - this.lastFlush < BUSY_MS) setTimeout(() => this.flush(), 1);
        else setImmediate(() => this.flush());
      }
    });
  }

  /** Commit what is queued now (also used at shutdown). */
  flush(): void {
    this.scheduled = false;
    this.lastFlush = performance.now();
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    let results: unknown[];
    try {
      results = this.db.transaction(() => batch.map((w) => w.fn())).immediate();
    } catch {
      // One failing write must not sink the others: retry each on its own.
      for (const w of batch) {
        try {
          w.resolve(this.db.transaction(w.fn).immediate());
          this.stats.Commits += 1;
          this.stats.Writes += 1;
        } catch (err) {
          w.reject(err);
        }
      }
      return;
    }
    this.stats.Commits += 1;
    this.stats.Writes += batch.length;
    batch.forEach((w, i) => w.resolve(results[i]));
  }
}
