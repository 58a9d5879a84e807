import type { Db } from '../db/connection';

/** Above this event-loop utilisation the service counts as busy and favours bigger batches. */
const BUSY_UTILISATION = 0.5;
/** How often the utilisation is sampled (ms). */
const SAMPLE_MS = 100;
/**
 * When busy, how long a batch collects writes before its commit (ms). Measured at 1500
 * cycles/s, median of 3 runs: 1 ms gave a decision p99 of 1017 ms, 2 ms 462 ms (fewer fsyncs
 * blocking the loop); 3 ms saved a little more CPU but not latency.
 */
const BUSY_WINDOW_MS = 2;

interface Work {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Group commit: writes asked for within one turn of the event loop are committed together in
 * one immediate transaction (one fsync with synchronous=FULL), and each caller learns of its
 * result only after that commit, so nothing is acknowledged before it is durable.
 *
 * The batching adapts to load, judged by the event loop's utilisation (busy: over half of
 * the time in two 100 ms samples in a row):
 * - idle: commit at the end of the turn, or at once when the sorter link asks (`flushIfIdle`
 *   after each chunk of telegrams), for the lowest latency;
 * - busy: collect writes for BUSY_WINDOW_MS so that one commit carries more of them, since
 *   every commit blocks the loop for its fsync (measured in docs/performance.md).
 * With `enabled` false every write is its own transaction (for comparison in the benchmark).
 */
export class Committer {
  private queue: Work[] = [];
  private scheduled = false;
  private busy = false;
  private readonly sampler?: NodeJS.Timeout;
  /** Transactions committed, and writes they carried (for the benchmark and /status). */
  readonly stats = { Commits: 0, Writes: 0 };

  constructor(
    private readonly db: Db,
    private readonly enabled = true,
  ) {
    if (enabled) {
      let last = performance.eventLoopUtilization();
      let wasOver = false;
      this.sampler = setInterval(() => {
        const now = performance.eventLoopUtilization();
        const over = performance.eventLoopUtilization(now, last).utilization > BUSY_UTILISATION;
        // Busy only when two samples in a row say so: a lone spike (a garbage collection, the
        // start-up) is not load, and would make a few messages wait for a batch for nothing.
        this.busy = over && wasOver;
        wasOver = over;
        last = now;
      }, SAMPLE_MS);
      this.sampler.unref();
    }
  }

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
        if (this.busy) setTimeout(() => this.flush(), BUSY_WINDOW_MS);
        else setImmediate(() => this.flush());
      }
    });
  }

  /** Commit what is queued now unless the service is busy (then the scheduled commit does). */
  flushIfIdle(): void {
    if (!this.busy && this.queue.length > 0) this.flush();
  }

  /** Commit what is queued now (also used at shutdown). */
  flush(): void {
    this.scheduled = false;
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

  /** Stop sampling (at shutdown). */
  close(): void {
    if (this.sampler) clearInterval(this.sampler);
  }
}
