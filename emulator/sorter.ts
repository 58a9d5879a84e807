// The emulated sorter: inducts items, asks for and applies assignments, recirculates and rejects,
// reports VERIFYs.
import type { InductDto, VerifyDto } from '../model/messages';
import type { Telegram } from '../lib/telegram/telegram';
import type { TelegramWire } from '../lib/layout/wire';
import type { PlcLink } from './plc-link';
import { LatencyWindow } from '../lib/ops/latency';
import { EmulatedDestinations } from './destinations';
import { seededRandom } from './random';
import type { SorterDto } from '../lib/layout/wire';

const TELEGRAM_OF = { REQUEST: 'REQU', VERIFY: 'VERI', SCAN: 'SCAN' } as const;

/** How the emulated sorter behaves. */
export interface SorterOptions {
  /** Items inducted per second. */
  rate: number;
  seed: number;
  /** Time from REQUEST to the divert decision, ms (a real sorter's decision window). */
  decisionWindowMs: number;
  /** Time an item takes to come round again when it recirculates, ms. */
  loopMs: number;
  /** Recirculations before an item goes to the reject destination. */
  maxRecirculations: number;
  destinations: number;
  /** Items a destination holds before it reports NotReady. */
  capacity: number;
  /** Chance that an item's barcode is not read. */
  noReadRate: number;
  /** Time an operator takes to empty a full destination (then presses its button), ms. */
  emptyAfterMs: number;
  /**
   * The decision figures (percentiles, maximum) leave out the REQUESTs sent in the first this many
   * ms of inducting: a benchmark's warm-up. Every other count covers the whole run.
   */
  measureAfterMs: number;
  /** Keep every decision sample for `decisionLog()` (the emulator's `--decision-log`). */
  keepDecisions?: boolean;
}

export const defaultSorterOptions: SorterOptions = {
  rate: 10,
  seed: 1,
  decisionWindowMs: 1500,
  loopMs: 1500,
  maxRecirculations: 3,
  destinations: 20,
  capacity: 40,
  noReadRate: 0.03,
  emptyAfterMs: 4000,
  measureAfterMs: 0,
};

export const REJECT = 'REJECT';

interface Item {
  trackId: string;
  barcode: string;
  length: number;
  width: number;
  height: number;
  weight: number;
  recirculations: number;
  /** The latest assignment received for the current pass, if any. */
  assigned: string | null;
  /** Ever assigned (to tell a late assignment from a missing one). */
  everAssigned: boolean;
  decided: boolean;
  /** When this pass's REQUEST was produced (performance.now()). */
  requestedAt: number;
  /** Inducted once `measureAfterMs` had passed: counted in `sorted_as_assigned_measured`. */
  measured: boolean;
}

/** The run's statistics, printed as `EMULATOR {json}` at exit. */
export interface SorterStats {
  inducted: number;
  requests: number;
  verifies: number;
  scans: number;
  assignments: number;
  destination_settings: number;
  sorted_as_assigned: number;
  /**
   * Of those, the items inducted after `--measure-after` (all of them without it): the items of a
   * benchmark's measured window, counted by the sorter, also when an overload sends others round.
   */
  sorted_as_assigned_measured: number;
  sorted_elsewhere: number;
  recirculated: number;
  rejected: number;
  late_assignments: number;
  unknown_assignments: number;
  /** Passes that reached their decision point without an assignment (the item recirculated or was rejected). */
  passes_without_assignment: number;
  /** When the last such pass sent its REQUEST, seconds after inducting began (null: none). */
  last_pass_without_assignment_s: number | null;
}

/**
 * The sorter: inducts items at `rate`, sends a REQUEST for each, waits the decision window for
 * the assignment, diverts the item if its destination is Ready and not full, else recirculates
 * it (RecirculationCount + 1, a new REQUEST) up to a limit, then rejects it; sends a VERIFY with
 * the destination actually reached. Destinations fill up, report SCANs, are emptied by an
 * operator's button press, and apply the settings the WCS sends (emulator/destinations.ts).
 */
export class EmulatedSorter {
  readonly stats: SorterStats = {
    inducted: 0,
    requests: 0,
    verifies: 0,
    scans: 0,
    assignments: 0,
    destination_settings: 0,
    sorted_as_assigned: 0,
    sorted_as_assigned_measured: 0,
    sorted_elsewhere: 0,
    recirculated: 0,
    rejected: 0,
    late_assignments: 0,
    unknown_assignments: 0,
    passes_without_assignment: 0,
    last_pass_without_assignment_s: null,
  };
  /** REQUEST sent to assignment received, ms, one sample per pass that got an assignment. */
  private readonly decisionMs = new LatencyWindow(100_000);
  /** The longest of them, over the whole run (the window keeps only the last 100,000). */
  private decisionMaxMs: number | null = null;
  /** With `keepDecisions`: each sample, [REQUEST sent (ms since inducting began), decision ms, the pass's recirculations]. */
  private readonly decisions: Array<[number, number, number]> | null;
  private readonly random: () => number;
  private readonly items = new Map<string, Item>();
  private readonly destinations: EmulatedDestinations;
  private readonly timers = new Set<NodeJS.Timeout>();
  private inductTimer: NodeJS.Timeout | null = null;
  private serial: number;
  /** The layout the PLC link speaks: the sorter's messages are written in it. */
  private readonly wire: TelegramWire;
  /** The induct's name: IND01, or as much of a name as the layout's field takes (IND1 in 4 characters). */
  private readonly inductName: string;

  constructor(
    private readonly link: PlcLink,
    private readonly o: SorterOptions,
  ) {
    this.random = seededRandom(o.seed);
    this.decisions = o.keepDecisions ? [] : null;
    this.wire = link.wire;
    const width = this.wire.layout.telegrams.get('REQU')?.fields.find((f) => f.maps === 'InductLocation')?.width ?? 5;
    this.inductName = width >= 5 ? 'IND01' : `IND${'1'.padStart(Math.max(1, width - 3), '0')}`.slice(0, width);
    this.serial = Math.floor(this.random() * 1e6) * 1000;
    this.destinations = new EmulatedDestinations({
      count: o.destinations,
      capacity: o.capacity,
      emptyAfterMs: o.emptyAfterMs,
      random: this.random,
      after: (ms, fn) => this.after(ms, fn),
      scan: (m) => {
        if (this.send(m)) this.stats.scans += 1;
      },
    });
  }

  /** performance.now() when inducting began. */
  private startedAt = 0;

  /** Whether a moment (performance.now()) falls after `measureAfterMs` of inducting: the measured window. */
  private measuring(at: number): boolean {
    return at >= this.startedAt + this.o.measureAfterMs;
  }

  /** Report every destination, then start inducting. */
  start(): void {
    this.startedAt = performance.now();
    this.destinations.reportAll();
    if (this.o.rate > 0) {
      const every = 1000 / this.o.rate;
      let next = Date.now();
      const loop = () => {
        const now = Date.now();
        while (next <= now) {
          this.induct();
          next += every;
        }
        this.inductTimer = setTimeout(loop, Math.max(1, next - Date.now()));
      };
      loop();
    }
  }

  /** Stop inducting (items on the sorter still finish their passes). */
  stopInducting(): void {
    if (this.inductTimer) clearTimeout(this.inductTimer);
    this.inductTimer = null;
  }

  /**
   * With `keepDecisions`: every sample of the decision figures as CSV, in the order the
   * assignments came (`requested_s`: when its REQUEST was sent, seconds since inducting began;
   * `decision_ms`; `recirculations`: 0 for an item's first pass). Null without.
   */
  decisionLog(): string | null {
    if (this.decisions === null) return null;
    const rows = this.decisions.map(([at, ms, pass]) => `${(at / 1000).toFixed(3)},${ms.toFixed(2)},${pass}`);
    return ['requested_s,decision_ms,recirculations', ...rows].join('\n') + '\n';
  }

  /** Decision round trip percentiles and maximum (ms), as seen by the sorter. */
  decisionSummary(): { decision_p50_ms: number | null; decision_p99_ms: number | null; decision_max_ms: number | null } {
    const { P50Ms, P99Ms } = this.decisionMs.summary();
    return {
      decision_p50_ms: P50Ms,
      decision_p99_ms: P99Ms,
      decision_max_ms: this.decisionMaxMs === null ? null : Math.round(this.decisionMaxMs * 100) / 100,
    };
  }

  /** Items still on the sorter. */
  get onSorter(): number {
    return this.items.size;
  }

  /** Stop everything. */
  stop(): void {
    this.stopInducting();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** A data telegram from the service: an assignment or destination settings. */
  onData(t: Telegram): void | { code: number; text: string } {
    const f = this.wire.decodeData(t.type, t.data);
    if (t.type === 'ASGN') return this.onAssignment(String(f.TrackID), String(f.Destination));
    if (t.type === 'DSET') {
      this.stats.destination_settings += 1;
      return this.destinations.apply(f);
    }
    return { code: 3, text: `${t.type} not expected` };
  }

  private after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private induct(): void {
    this.serial += 1;
    const r = this.random;
    const noRead = r() < this.o.noReadRate;
    const ean = String(Math.floor(r() * 1e12)).padStart(12, '0');
    const item: Item = {
      trackId: String(this.serial).padStart(10, '0'),
      barcode: noRead ? 'NOREAD' : ean + checkDigit(ean),
      length: Math.round((100 + r() * 500) * 10) / 10,
      width: Math.round((80 + r() * 320) * 10) / 10,
      height: Math.round((20 + r() * 280) * 10) / 10,
      weight: Math.round((0.05 + r() * 19.9) * 1000) / 1000,
      recirculations: 0,
      assigned: null,
      everAssigned: false,
      decided: false,
      requestedAt: 0,
      measured: this.measuring(performance.now()),
    };
    this.items.set(item.trackId, item);
    this.stats.inducted += 1;
    this.request(item);
  }

  private request(item: Item): void {
    item.assigned = null;
    item.decided = false;
    item.requestedAt = performance.now();
    const m: InductDto = {
      Type: 'REQUEST',
      TrackID: item.trackId,
      Barcode: item.barcode,
      MessageCode: 210,
      InductLocation: this.inductName,
      RecirculationCount: item.recirculations,
      Length: item.length,
      Width: item.width,
      Height: item.height,
      Weight: item.weight,
    };
    this.send(m);
    this.stats.requests += 1;
    this.after(this.o.decisionWindowMs, () => this.decide(item));
  }

  private onAssignment(trackId: string, destination: string): void | { code: number; text: string } {
    this.stats.assignments += 1;
    const item = this.items.get(trackId);
    if (!item) {
      // The item already left the sorter: the assignment came too late for any pass.
      this.stats.late_assignments += 1;
      return;
    }
    if (item.decided) {
      this.stats.late_assignments += 1;
      return;
    }
    if (!this.destinations.has(destination) && destination !== REJECT) this.stats.unknown_assignments += 1;
    if (item.assigned === null && this.measuring(item.requestedAt)) {
      const ms = performance.now() - item.requestedAt;
      this.decisionMs.add(ms);
      this.decisionMaxMs = Math.max(this.decisionMaxMs ?? 0, ms);
      this.decisions?.push([item.requestedAt - this.startedAt, ms, item.recirculations]);
    }
    item.assigned = destination;
    item.everAssigned = true;
  }

  private decide(item: Item): void {
    item.decided = true;
    if (item.assigned === null) {
      this.stats.passes_without_assignment += 1;
      this.stats.last_pass_without_assignment_s = Math.round((item.requestedAt - this.startedAt) / 10) / 100;
    }
    if (item.assigned === REJECT) return this.divert(item, REJECT, true);
    if (item.assigned && this.destinations.accepts(item.assigned)) {
      this.divert(item, item.assigned, true);
      return this.destinations.receive(item.assigned);
    }
    if (item.recirculations >= this.o.maxRecirculations) {
      this.stats.rejected += 1;
      return this.divert(item, REJECT, false);
    }
    item.recirculations += 1;
    this.stats.recirculated += 1;
    this.after(this.o.loopMs, () => this.request(item));
  }

  private divert(item: Item, destination: string, asAssigned: boolean): void {
    this.items.delete(item.trackId);
    if (asAssigned) this.stats.sorted_as_assigned += 1;
    if (asAssigned && item.measured) this.stats.sorted_as_assigned_measured += 1;
    const m: VerifyDto = { Type: 'VERIFY', TrackID: item.trackId, Barcode: item.barcode, Destination: destination, MessageCode: 212 };
    if (this.send(m)) this.stats.verifies += 1;
  }

  /** A message to the host in the layout's telegram for it; false if the layout has none (a sorter without VERIFYs or destination lights sends none). */
  private send(m: SorterDto): boolean {
    if (!this.wire.layout.telegrams.has(TELEGRAM_OF[m.Type])) return false;
    const { type, data } = this.wire.sorterMessageData(m);
    this.link.sendData(type, data);
    return true;
  }
}

/** EAN-13 check digit of 12 digits. */
function checkDigit(digits: string): number {
  const sum = [...digits].reduce((s, c, i) => s + Number(c) * (i % 2 === 0 ? 1 : 3), 0);
  return (10 - (sum % 10)) % 10;
}
