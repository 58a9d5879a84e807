// A window of recent latency samples with percentiles, and the wake-latency meter of /status.
import { Recent } from '../link/recent';

/** Forget a map's oldest entry (the first one set). */
function dropOldest<K>(m: Map<K, unknown>): void {
  const oldest = m.keys().next();
  if (!oldest.done) m.delete(oldest.value);
}

/** REQUESTs older than this are forgotten by the decision meter: past any sorter's decision window. */
const FORGET_MS = 60_000;

/** A latency window's percentiles (ms, rounded to 0.01; null without samples) and its samples since start. */
export interface LatencySummary {
  P50Ms: number | null;
  P99Ms: number | null;
  Samples: number;
}

/**
 * A window of the most recent latency samples (ms) with percentiles: cheap enough for the hot
 * path (one array write a sample), enough for p50/p99 in /status and the benchmark.
 */
export class LatencyWindow {
  private readonly samples: Float64Array;
  private count = 0;
  /** The summary of the samples as they are now, until the next one (the dashboard asks every second, at idle too). */
  private cached: LatencySummary | null = null;

  constructor(size = 10_000) {
    this.samples = new Float64Array(size);
  }

  /** Record one sample. */
  add(ms: number): void {
    this.samples[this.count % this.samples.length] = ms;
    this.count += 1;
    this.cached = null;
  }

  /** Samples recorded so far (all time). */
  get total(): number {
    return this.count;
  }

  /** Percentiles of the window, rounded to 0.01 ms; null without samples. */
  summary(): LatencySummary {
    this.cached ??= this.compute();
    return { ...this.cached };
  }

  private compute(): LatencySummary {
    const n = Math.min(this.count, this.samples.length);
    if (n === 0) return { P50Ms: null, P99Ms: null, Samples: 0 };
    // A typed array sorts by number without a comparator: a quarter of the time for 10,000 samples.
    const sorted = this.samples.slice(0, n).sort();
    const at = (p: number) => Math.round((sorted[Math.min(n - 1, Math.floor(p * n))] ?? Number.NaN) * 100) / 100;
    return { P50Ms: at(0.5), P99Ms: at(0.99), Samples: this.count };
  }
}

/**
 * Wake latency: from a sorter telegram's arrival at the service to the response that hands its
 * message to a waiting client. The service records arrivals only for messages that find a
 * client waiting; those not yet handed out are remembered up to `limit`.
 */
export class WakeMeter {
  private readonly arrivals = new Map<string, number>();
  readonly window = new LatencyWindow();
  /** Told of each sample too (ms), for the metrics' histogram. */
  observe?: (ms: number) => void;

  constructor(private readonly limit = 100_000) {}

  /** A message was received (performance.now() of its telegram's arrival). */
  arrived(queue: string, id: number, at: number): void {
    if (this.arrivals.size >= this.limit) dropOldest(this.arrivals);
    this.arrivals.set(`${queue}:${id}`, at);
  }

  /** Its response is being written now. */
  written(queue: string, id: number): void {
    const key = `${queue}:${id}`;
    const at = this.arrivals.get(key);
    if (at === undefined) return;
    this.arrivals.delete(key);
    const ms = performance.now() - at;
    this.window.add(ms);
    this.observe?.(ms);
  }
}

/** What GET /status shows of the decisions (DecisionLatency). */
export interface DecisionStatus extends LatencySummary, DecisionCounts {}

/** The decision meter's counts (GET /status and the metrics). */
export interface DecisionCounts {
  /** REQUESTs of the last `forgetMs` still without an assignment. */
  Awaiting: number;
  /** REQUESTs that waited longer than the late threshold for their assignment since start, or got none. */
  Late: number;
}

/**
 * Decision latency: from a REQUEST arriving from the sorter to the WCS's assignment for its
 * TrackID being accepted (the part of the sorter's decision window the WCS and the service use).
 * A decision is late after `lateMs` (LateDecisionMs; 0: none is).
 */
export class DecisionMeter {
  /** The REQUESTs waiting for their assignment, in the order they were told: the arrival, and whether a look counted it late. */
  private readonly requested_ = new Map<string, { at: number; late: boolean }>();
  /** The latest decisions (when, in ms since the epoch, and how long), for the dashboard's chart. */
  readonly recent = new Recent<{ at: number; ms: number }>(300);
  /** The latest 10,000 decisions' percentiles, for GET /status. */
  readonly window = new LatencyWindow();
  private readonly lateMs: number;
  private readonly limit: number;
  /** Late REQUESTs since start, and those of them no look has returned yet. */
  private lateTotal = 0;
  private lateUnlooked = 0;

  constructor(
    private readonly observe: (ms: number) => void,
    options: { lateMs?: number; limit?: number } = {},
  ) {
    this.lateMs = options.lateMs ?? 0;
    this.limit = options.limit ?? 100_000;
  }

  /** A REQUEST for this item arrived (performance.now() of its telegram). */
  requested(trackId: string, at: number): void {
    if (this.requested_.size >= this.limit) dropOldest(this.requested_);
    // Deleted first, so that the map stays in the order of arrival (an item that went round moves to the end).
    this.requested_.delete(trackId);
    this.requested_.set(trackId, { at, late: false });
  }

  /**
   * REQUESTs that passed the late threshold since the last look and were not counted before (the
   * DECISIONS_LATE alarm): those still without an assignment, and those whose assignment came late
   * between two looks. REQUESTs older than `forgetMs` are forgotten: an assignment that comes later
   * still is past any sorter's decision window (and the outbox's time to live), and the look stays
   * short while the WCS is away.
   */
  late(now = performance.now(), forgetMs = FORGET_MS): number {
    let n = this.lateUnlooked;
    this.lateUnlooked = 0;
    // LateDecisionMs is at most forgetMs: a REQUEST is counted late before it is forgotten.
    const from = this.lateMs > 0 ? this.lateMs : forgetMs;
    for (const [trackId, entry] of this.requested_) {
      const age = now - entry.at;
      // The rest arrived later (a REQUEST told late, after a stalled commit, is looked at next time).
      if (age <= from) break;
      if (this.lateMs > 0 && !entry.late) {
        entry.late = true;
        n += 1;
        this.lateTotal += 1;
      }
      if (age > forgetMs) this.requested_.delete(trackId);
    }
    return n;
  }

  /** The assignment for this item was accepted. */
  assigned(trackId: string): void {
    const entry = this.requested_.get(trackId);
    if (entry === undefined) return;
    this.requested_.delete(trackId);
    const ms = performance.now() - entry.at;
    // Late, and no look counted it while it waited: counted now, returned by the next look.
    if (this.lateMs > 0 && ms > this.lateMs && !entry.late) {
      this.lateTotal += 1;
      this.lateUnlooked += 1;
    }
    this.window.add(ms);
    this.recent.add({ at: Date.now(), ms });
    this.observe(ms);
  }

  /** The REQUESTs awaiting their assignment and the late ones; REQUESTs older than `forgetMs` are not counted as awaiting. */
  counts(now = performance.now(), forgetMs = FORGET_MS): DecisionCounts {
    // In the order of arrival: the forgotten ones come first.
    let old = 0;
    for (const { at } of this.requested_.values()) {
      if (now - at <= forgetMs) break;
      old += 1;
    }
    return { Awaiting: this.requested_.size - old, Late: this.lateTotal };
  }

  /** The figures GET /status shows: the window's percentiles and the counts. */
  status(now = performance.now()): DecisionStatus {
    return { ...this.window.summary(), ...this.counts(now) };
  }
}
