// When the rows of a queue (or the outbox) arrived, on the clock that never steps: the ages that
// decide something (MaxRequestAgeSeconds, QUEUE_OLD_*, OUTBOX_UNACKNOWLEDGED, the oldest message's
// age in /status and the metrics) do not move when NTP sets the system clock, which the times
// stored in the database do (docs/operations.md, "The system clock").
import type { QueueReads } from '../../db/queue-reads';

/**
 * Two marks at most in each MARK_MS of arrivals (a group's first and last): what an age or the
 * expiry can be off by, and what the memory grows with (at most 20 marks a second of a queue's span).
 */
export const MARK_MS = 100;
/** More marks than this (a queue that nobody empties for hours): every other one of the older half is dropped; their ages get coarser, never older than the row is. */
export const MAX_MARKS = 20_000;

/**
 * The arrivals of one table's rows in this process: ids rise with arrival (the main thread gives
 * them, or the writer in the order it was handed the rows), and a mark (id, time) is kept for the
 * first and the last arrival of each MARK_MS. A row between two marks arrived between their times.
 * Rows below the first id recorded arrived before this process started: their stored time is all
 * there is (`ageMs` says null).
 */
export class Arrivals {
  private ids: number[] = [];
  private at: number[] = [];
  /** The last arrival: the mark that ends the group under way, once the next group starts. */
  private lastId = 0;
  private lastAt = 0;
  /** The first id recorded; rows below it are the previous run's. */
  private firstId: number | null = null;

  constructor(
    private readonly markMs = MARK_MS,
    private readonly maxMarks = MAX_MARKS,
  ) {}

  /** Row `id` arrived at `steadyMs`; an id not above the last one recorded is left out (its neighbours bound it). */
  arrived(id: number, steadyMs: number): void {
    if (id <= this.lastId) return;
    this.firstId ??= id;
    const n = this.ids.length;
    if (n === 0 || steadyMs - (this.at[n - 1] ?? steadyMs) >= this.markMs) {
      // A new group: the last one's last arrival closes it.
      if (n > 0 && this.ids[n - 1] !== this.lastId) this.push(this.lastId, this.lastAt);
      this.push(id, steadyMs);
    }
    this.lastId = id;
    this.lastAt = steadyMs;
  }

  /**
   * How long ago row `id` arrived (ms): never more than it is, within MARK_MS of it while the marks
   * are fine (an alarm may come that much later, never early); null for a row from before this
   * process's first arrival, or one above the last recorded.
   */
  ageMs(id: number, steadyNow: number): number | null {
    if (this.firstId === null || id < this.firstId) return null;
    if (id >= this.lastId) return id === this.lastId ? steadyNow - this.lastAt : null;
    const i = atOrBelow(this.ids, id); // the marks at or below id: at[i] is the first mark's above it
    const exact = i > 0 && this.ids[i - 1] === id;
    return steadyNow - ((exact ? this.at[i - 1] : this.at[i]) ?? this.lastAt);
  }

  /** The highest id that arrived at or before `steadyMs` for certain (0: none), and the first id recorded (null: none yet). */
  arrivedBy(steadyMs: number): { upToId: number; firstId: number | null } {
    if (this.lastId > 0 && this.lastAt <= steadyMs) return { upToId: this.lastId, firstId: this.firstId };
    const i = atOrBelow(this.at, steadyMs);
    return { upToId: this.ids[i - 1] ?? 0, firstId: this.firstId };
  }

  /** Rows below `id` have left the table (it is the oldest there): their marks go, but the one that bounds `id`. */
  forgetBelow(id: number): void {
    const i = atOrBelow(this.ids, id) - 1; // the last mark at or below id
    if (i > 0) {
      this.ids.splice(0, i);
      this.at.splice(0, i);
    }
  }

  /** Marks kept (the tests and the memory bound). */
  get marks(): number {
    return this.ids.length;
  }

  private push(id: number, at: number): void {
    this.ids.push(id);
    this.at.push(at);
    if (this.ids.length <= this.maxMarks) return;
    // Every other mark of the older half: a row there lies between two marks further apart, while
    // the newer half (the expiry's cutoff, seconds back) keeps its resolution.
    const half = Math.floor(this.ids.length / 2);
    const keep = (_: number, i: number) => i >= half || i % 2 === 0;
    this.ids = this.ids.filter(keep);
    this.at = this.at.filter(keep);
  }
}

/** How many of `sorted` (ascending) are at or below `x`. */
function atOrBelow(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? Infinity) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The tables whose rows' ages are kept: the two queues and the outbox. */
export type ArrivalTable = 'sortation' | 'destination' | 'outbox';

/**
 * The ages of stored rows, step-proof where this process saw them arrive: on `steadyMs` (the clock
 * that never steps; absent, as under a clock a test drives by hand, the wall clock), else from the
 * stored time on the wall clock.
 */
export class StoredAges {
  private readonly tables: Record<ArrivalTable, Arrivals> = {
    sortation: new Arrivals(),
    destination: new Arrivals(),
    outbox: new Arrivals(),
  };

  constructor(
    private readonly clock: () => Date,
    private readonly steadyMs?: () => number,
  ) {}

  /** Now on the clock ages are counted by. */
  now(): number {
    return this.steadyMs?.() ?? this.clock().getTime();
  }

  /** Row `id` of `table` arrived `at` (this.now() when it came). */
  arrived(table: ArrivalTable, id: number, at: number): void {
    this.tables[table].arrived(id, at);
  }

  /** The age (ms, never below 0) of a queue's oldest message (null: the queue is empty). */
  queueAgeMs(queue: 'sortation' | 'destination', oldest: { id: number; receivedAt: string } | null, wallNow: number): number | null {
    return oldest ? this.oldestAgeMs(queue, oldest.id, oldest.receivedAt, wallNow) : null;
  }

  /** The age (ms, never below 0) of the outbox's oldest entry (undefined: the outbox is empty). */
  outboxAgeMs(oldest: { id: number; createdAt: string } | undefined, wallNow: number): number | null {
    return oldest ? this.oldestAgeMs('outbox', oldest.id, oldest.createdAt, wallNow) : null;
  }

  /** The ages (s) of each queue's oldest message and of the outbox's oldest entry (null: empty), as the alarms and the metrics read them. */
  oldestSeconds(
    reads: { store: Pick<QueueReads, 'oldest'>; outbox: { peek(limit: number): ReadonlyArray<{ id: number; createdAt: string }> } },
    wallNow: number,
  ): Record<ArrivalTable, number | null> {
    const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);
    return {
      sortation: seconds(this.queueAgeMs('sortation', reads.store.oldest('sortation'), wallNow)),
      destination: seconds(this.queueAgeMs('destination', reads.store.oldest('destination'), wallNow)),
      outbox: seconds(this.outboxAgeMs(reads.outbox.peek(1)[0], wallNow)),
    };
  }

  /**
   * The age of the oldest row of `table`, `id` stored at `storedAt`: its arrival in this process
   * if seen, else its stored time against `wallNow`. The marks below it are forgotten.
   */
  private oldestAgeMs(table: ArrivalTable, id: number, storedAt: string, wallNow: number): number {
    const arrivals = this.tables[table];
    arrivals.forgetBelow(id);
    return Math.max(0, arrivals.ageMs(id, this.now()) ?? wallNow - Date.parse(storedAt));
  }

  /**
   * Which rows of `table` are older than `ageMs`: those of this process up to `upToId` (0: none),
   * and those below `firstId` (the previous run's) whose stored time is before `before` (ISO).
   */
  olderThan(table: ArrivalTable, ageMs: number, wallNow: number): { upToId: number; firstId: number; before: string } {
    const { upToId, firstId } = this.tables[table].arrivedBy(this.now() - ageMs);
    return { upToId, firstId: firstId ?? Number.MAX_SAFE_INTEGER, before: new Date(wallNow - ageMs).toISOString() };
  }
}
