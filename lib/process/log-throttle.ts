// Repeated log lines, throttled: the first is written at once, then at most one a period, saying
// how many were held back, so that a fault that repeats (a sorter out of reach, a full disk)
// cannot flood the log of an edge box.
import type { Logger } from './logger';

type Level = 'warn' | 'error' | 'info';

/** A log line that may repeat: `write` logs now or counts; `reset` ends the episode. */
export class ThrottledLog {
  private lastAt = -Infinity;
  private held = 0;

  constructor(
    private readonly log: Logger,
    private readonly level: Level,
    private readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Log this occurrence, unless one was logged within the period (then it is counted). */
  write(fields: object, msg: string): void {
    const t = this.now();
    if (t - this.lastAt < this.periodMs) {
      this.held += 1;
      return;
    }
    const repeated = this.held;
    this.held = 0;
    this.lastAt = t;
    this.log[this.level](
      { ...fields, ...(repeated > 0 && { repeatedSinceLastLine: repeated }) },
      repeated > 0 ? `${msg} (and ${repeated} more like it since the last line)` : msg,
    );
  }

  /** The episode is over: the next occurrence is logged at once. Returns how many were held back. */
  reset(): number {
    const held = this.held;
    this.held = 0;
    this.lastAt = -Infinity;
    return held;
  }
}
