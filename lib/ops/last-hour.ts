// The last hour in samples: what the dashboard's charts and its message rates draw, kept in memory
// only (nothing is written to the disk; a restart starts it empty).

/** Per queue. */
export interface PerQueue {
  sortation: number;
  destination: number;
}

/** One sample: the interval that ended at `At` (rates per second over it) and the state at its end. */
export interface Sample {
  At: string;
  /** Seconds the interval lasted. */
  Seconds: number;
  /** REQUESTs from the sorter a second: items inducted (a recirculated item counts again). */
  Items: number;
  /** Messages committed to each queue, and handed to a WCS client, a second. */
  In: PerQueue;
  Out: PerQueue;
  /** Telegrams a second on the sorter link, received and sent (heartbeats and ACKs included). */
  TelegramsIn: number;
  TelegramsOut: number;
  /** Decisions (a REQUEST's arrival to its assignment) made in the interval, their p50/p99 (ms; null without any), and how many took longer than LateDecisionMs. */
  Decisions: number;
  DecisionP50Ms: number | null;
  DecisionP99Ms: number | null;
  LateDecisions: number;
  /** Messages waiting in each queue at the end, and the age of the oldest (s; null: none). */
  Depth: PerQueue;
  OldestAgeSeconds: number | null;
  /** The sorter link at the end: 1 up, 0 down; null in test mode (no link). */
  LinkUp: 0 | 1 | null;
}

/** Running totals and the state, read at each sample's end. */
export interface Reading {
  at: Date;
  requests: number;
  in: PerQueue;
  out: PerQueue;
  telegramsIn: number;
  telegramsOut: number;
  depth: PerQueue;
  oldestAgeSeconds: number | null;
  linkUp: boolean | null;
}

/** How many decision latencies one interval keeps for its percentiles (at 30 items/s and 10 s: 300). */
const DECISIONS_KEPT = 20_000;

const percentile = (sorted: number[], p: number) => {
  const v = sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return v === undefined ? null : Math.round(v * 10) / 10;
};
const perSecond = (a: number, b: number, s: number) => Math.round((Math.max(0, a - b) / s) * 100) / 100;

/**
 * The last `keep` samples (360: an hour at 10 s), oldest first. `decided` is called for every
 * decision (cheap: one array push); `record` closes the interval with a reading of the totals.
 */
export class LastHour {
  private readonly samples_: Sample[] = [];
  private decisions: number[] = [];
  private lateCount = 0;
  private previous: Reading | null = null;

  constructor(
    private readonly lateDecisionMs: number,
    private readonly keep = 360,
  ) {}

  /** A decision took `ms`. */
  decided(ms: number): void {
    if (this.lateDecisionMs > 0 && ms > this.lateDecisionMs) this.lateCount += 1;
    if (this.decisions.length < DECISIONS_KEPT) this.decisions.push(ms);
  }

  /** Close the interval: the first reading only sets the totals' start. */
  record(r: Reading): Sample | null {
    const before = this.previous;
    this.previous = r;
    const decisions = this.decisions.sort((a, b) => a - b);
    const late = this.lateCount;
    this.decisions = [];
    this.lateCount = 0;
    if (!before) return null;
    const s = Math.max(0.001, (r.at.getTime() - before.at.getTime()) / 1000);
    const sample: Sample = {
      At: r.at.toISOString(),
      Seconds: Math.round(s * 1000) / 1000,
      Items: perSecond(r.requests, before.requests, s),
      In: {
        sortation: perSecond(r.in.sortation, before.in.sortation, s),
        destination: perSecond(r.in.destination, before.in.destination, s),
      },
      Out: {
        sortation: perSecond(r.out.sortation, before.out.sortation, s),
        destination: perSecond(r.out.destination, before.out.destination, s),
      },
      TelegramsIn: perSecond(r.telegramsIn, before.telegramsIn, s),
      TelegramsOut: perSecond(r.telegramsOut, before.telegramsOut, s),
      Decisions: decisions.length,
      DecisionP50Ms: percentile(decisions, 0.5),
      DecisionP99Ms: percentile(decisions, 0.99),
      LateDecisions: late,
      Depth: { ...r.depth },
      OldestAgeSeconds: r.oldestAgeSeconds === null ? null : Math.round(r.oldestAgeSeconds * 10) / 10,
      LinkUp: r.linkUp === null ? null : r.linkUp ? 1 : 0,
    };
    this.samples_.push(sample);
    if (this.samples_.length > this.keep) this.samples_.shift();
    return sample;
  }

  /** The samples, oldest first. */
  samples(): Sample[] {
    return [...this.samples_];
  }

  /**
   * Messages a second in and out of each queue over the samples of the last `seconds` (the
   * dashboard's "Message rates"), and how many seconds they cover: 0 before the first sample.
   */
  rates(seconds: number): { Seconds: number; In: PerQueue; Out: PerQueue; Items: number; TelegramsIn: number; TelegramsOut: number } {
    let covered = 0;
    const sum = { items: 0, telegramsIn: 0, telegramsOut: 0, in: { sortation: 0, destination: 0 }, out: { sortation: 0, destination: 0 } };
    for (let i = this.samples_.length - 1; i >= 0 && covered < seconds - 0.001; i--) {
      const x = this.samples_.at(i);
      if (!x) break;
      covered += x.Seconds;
      sum.items += x.Items * x.Seconds;
      sum.telegramsIn += x.TelegramsIn * x.Seconds;
      sum.telegramsOut += x.TelegramsOut * x.Seconds;
      for (const q of ['sortation', 'destination'] as const) {
        sum.in[q] += x.In[q] * x.Seconds;
        sum.out[q] += x.Out[q] * x.Seconds;
      }
    }
    const per = (n: number) => (covered > 0 ? Math.round((n / covered) * 100) / 100 : 0);
    return {
      // To the millisecond, as a sample's: rounded coarser, a first sample shorter than 50 ms gave rates over 0 s.
      Seconds: Math.round(covered * 1000) / 1000,
      Items: per(sum.items),
      TelegramsIn: per(sum.telegramsIn),
      TelegramsOut: per(sum.telegramsOut),
      In: { sortation: per(sum.in.sortation), destination: per(sum.in.destination) },
      Out: { sortation: per(sum.out.sortation), destination: per(sum.out.destination) },
    };
  }
}
