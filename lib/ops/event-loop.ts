// The event loop's delay, sampled only while the service has work. A sampler wakes the process at
// every sample: left on while the sorter and the WCS wait, it was most of what an idle service
// did (150 wake-ups a second with prom-client's own at 10 ms). A delay needs work to cause it, so
// the samplers run from a request, a telegram or a scheduled run until a second of quiet, and a
// look at an idle loop finds nothing (0).
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** How long the samplers go on after the last piece of work (ms). */
export const SAMPLE_AFTER_WORK_MS = 1000;

/**
 * The sampling interval while the loop has work (ms). Each sample is a wake-up of the main thread
 * of its own (about 0.1 ms of CPU on this machine when the loop slept): at 20 ms that was 50 a
 * second, an item's worth at 50 items/s. A delay of 100 ms or more is always seen; a shorter one
 * when a sample falls into it. The liveness check warns at 1 s.
 */
export const SAMPLE_RESOLUTION_MS = 100;

/** What one reader saw since its last look (ms); 0 throughout when the loop had no work. */
export interface DelaySummary {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

const NOTHING: DelaySummary = { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 };

const summary = (h: IntervalHistogram): DelaySummary | null =>
  h.count === 0
    ? null
    : {
        min: h.min / 1e6,
        max: h.max / 1e6,
        mean: h.mean / 1e6,
        stddev: h.stddev / 1e6,
        p50: h.percentile(50) / 1e6,
        p90: h.percentile(90) / 1e6,
        p99: h.percentile(99) / 1e6,
      };

/** Two stretches of sampling as one: the worst of each figure (a percentile cannot be merged exactly). */
const merge = (a: DelaySummary | null, b: DelaySummary | null): DelaySummary | null =>
  !a || !b
    ? (a ?? b)
    : {
        min: Math.min(a.min, b.min),
        max: Math.max(a.max, b.max),
        mean: Math.max(a.mean, b.mean),
        stddev: Math.max(a.stddev, b.stddev),
        p50: Math.max(a.p50, b.p50),
        p90: Math.max(a.p90, b.p90),
        p99: Math.max(a.p99, b.p99),
      };

/**
 * The event loop's delay for the liveness check and the metrics, sampled while there is work. One
 * sampler serves every reader: a look drains what it saw into each reader's share. Node's sampler
 * measures each sample from the one before, even across a pause, so it is emptied (reset) before
 * it stops.
 */
export class EventLoopWatch {
  private readonly histogram = monitorEventLoopDelay({ resolution: SAMPLE_RESOLUTION_MS });
  /** What each reader has not looked at yet, drained from the sampler. */
  private readonly shares: Array<{ held: DelaySummary | null }> = [];
  private readonly health = this.reader();
  private sampling = false;
  private lastWorkAt = 0;
  private quiet: NodeJS.Timeout | null = null;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Work arrived (a request, a telegram, a scheduled run): sample the loop until a second after the last. */
  busy(): void {
    this.lastWorkAt = this.now();
    if (this.sampling) return;
    this.sampling = true;
    this.histogram.enable();
    this.armQuiet(SAMPLE_AFTER_WORK_MS);
  }

  /** The delay's p99 since the last look (ms; 0 when the loop had no work), for the liveness check. */
  delayP99Ms(): number {
    return this.health().p99;
  }

  /** A reader of its own (the metrics' event loop lag): each call returns what was seen since the call before. */
  reader(): () => DelaySummary {
    const share: { held: DelaySummary | null } = { held: null };
    this.shares.push(share);
    return () => {
      this.drain();
      const seen = share.held ?? NOTHING;
      share.held = null;
      return seen;
    };
  }

  /** Stop sampling for good. */
  stop(): void {
    if (this.quiet) clearTimeout(this.quiet);
    this.quiet = null;
    this.pause();
  }

  private drain(): void {
    const seen = summary(this.histogram);
    this.histogram.reset();
    if (seen) for (const share of this.shares) share.held = merge(share.held, seen);
  }

  private pause(): void {
    this.sampling = false;
    this.drain();
    this.histogram.disable();
  }

  /** One timer while sampling: it stops the sampler once a second passed without work, else waits out the rest. */
  private armQuiet(ms: number): void {
    this.quiet = setTimeout(() => {
      const left = this.lastWorkAt + SAMPLE_AFTER_WORK_MS - this.now();
      if (left > 0) return this.armQuiet(left);
      this.quiet = null;
      this.pause();
    }, ms);
    this.quiet.unref();
  }
}
