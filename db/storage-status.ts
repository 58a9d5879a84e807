// The storage's state as /status shows it: read from the writer thread's shared status fields,
// which stay readable while the thread is blocked on a lock or the disk.
import { Field, Phase } from './writer-protocol';

/**
 * The clock of the shared status fields' times (ms): the system's monotonic clock, the same in every
 * thread of the process and never set. On the wall clock, a step of it (NTP setting the time) while
 * a transaction or a sync was in flight would make it look stalled at once, or hide a stall for as
 * long as the step.
 */
export function sharedClockMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/** Storage states as /status shows them. */
export type StorageState = 'Ok' | 'Stalled' | 'Failing';

/** What /status shows of the storage. */
export interface StorageStatus {
  State: StorageState;
  /** Since when the state holds. */
  Since: string;
  /** Stalled: what the commit in flight waits for (another connection's lock, or the disk). */
  WaitingFor: 'Lock' | 'Disk' | null;
  /** Writes handed to the writer and not yet answered. */
  PendingWrites: number;
  /** Duration of the last committed transaction, lock wait included. */
  LastCommitMs: number | null;
  Commits: number;
  Writes: number;
  /** Disk syncs of the WAL: for the writes that must be durable before they are answered, and for entries the sorter had not acknowledged in time (DurableBySorterAck). */
  Syncs: number;
  /** How long the sync in flight has lasted (ms), null when none is. */
  SyncInFlightMs: number | null;
  /** Sorter telegrams acknowledged before their sync ended, since start (AckUnsyncedAfterMs): a power cut during such a sync may lose them. */
  AckedBeforeSync: number;
  /** Failing: why the last transaction failed. */
  LastError: string | null;
  /** Transactions that failed since start (a full disk, a read-only file). */
  Failures: number;
  /** The last failed transaction, when and why, even once commits succeed again: on a nearly full disk small commits may go through between failed ones. */
  LastFailure: { At: string; Error: string } | null;
  ReadOnly: boolean;
}

/** A transaction or a sync in flight for longer than this (ms) is a stall. */
export const DEFAULT_STALL_MS = 1000;

/**
 * After a failure, that commits succeed again is told (logged) only once none has failed for this
 * long (ms): on a disk full but for a few bytes small commits go through between failed ones, and
 * the log would say "failing" and "commits succeed again" at each of them.
 */
export const RECOVERED_AFTER_MS = 10_000;

/** Whether a failure at `atMs` was within RECOVERED_AFTER_MS of `nowMs` (one clock): the storage has not recovered yet (its log, GET /health/ready). */
export function failedRecently(atMs: number, nowMs: number): boolean {
  return nowMs - atMs < RECOVERED_AFTER_MS;
}

/**
 * Keeps the storage's state: Failing from a failed transaction until one commits again (for
 * good on a read-only file), Stalled while a transaction or a sync of the WAL is in flight for
 * longer than `stallMs`. What it tells (`onState`: the log) is held: Failing once, and Ok only at
 * a commit RECOVERED_AFTER_MS after the last failure, with how many failed meanwhile.
 */
export class StorageMonitor {
  /** The times below are on the fields' clock (sharedClockMs), shown on the wall clock by status(). */
  private failure: { since: number; error: string } | null = null;
  private okSince = sharedClockMs();
  private failures = 0;
  private lastFailure: { at: number; error: string } | null = null;
  /** What was last told: Failing from a failure until a commit RECOVERED_AFTER_MS after the last one. */
  private toldFailing = false;
  /** Failures since Failing was told. */
  private failuresSinceTold = 0;

  constructor(
    /** The writer thread's status fields (db/writer-protocol.ts, Field). */
    private readonly fields: BigInt64Array,
    private readonly readOnly: boolean,
    private readonly options: { stallMs?: number; onState?(state: StorageState, detail: string): void },
  ) {
    if (readOnly) this.failure = { since: this.okSince, error: 'the database file is read-only' };
  }

  /** A transaction failed (or the thread is gone), at `now` of the fields' clock: Failing, told once until it has recovered. */
  failed(error: string, now = sharedClockMs()): void {
    this.failures++;
    this.lastFailure = { at: now, error };
    if (!this.failure) this.failure = { since: now, error };
    else this.failure.error = error;
    this.failuresSinceTold++;
    if (this.toldFailing) return;
    this.toldFailing = true;
    this.failuresSinceTold = 1;
    this.options.onState?.('Failing', error);
  }

  /** A transaction committed, at `now` of the fields' clock: a failing storage (not a read-only one) is Ok again; told once none has failed for RECOVERED_AFTER_MS. */
  committed(now = sharedClockMs()): void {
    if (this.readOnly) return;
    if (this.failure) {
      this.failure = null;
      this.okSince = now;
    }
    if (!this.toldFailing || !this.lastFailure || failedRecently(this.lastFailure.at, now)) return;
    this.toldFailing = false;
    const n = this.failuresSinceTold;
    this.options.onState?.('Ok', n > 1 ? `commits succeed again (${n} transactions failed meanwhile)` : 'commits succeed again');
  }

  /**
   * Commits go through promptly: the storage is not failing, and no transaction has been in one
   * phase (waiting for the lock, writing) for longer than `maxMs`. A sync in flight does not
   * count: it runs beside the commits. `now` is on the fields' clock (sharedClockMs).
   */
  prompt(maxMs: number, now = sharedClockMs()): boolean {
    if (this.failure) return false;
    const phase = Number(Atomics.load(this.fields, Field.Phase)) as Phase;
    return phase === Phase.Idle || now - Number(Atomics.load(this.fields, Field.PhaseSince)) <= maxMs;
  }

  /**
   * The storage as /status shows it, with `pendingWrites` not yet answered, at `now` of the wall
   * clock and `shared` of the fields' (sharedClockMs): a stall is timed by the latter and shown
   * as the wall-clock time as long ago.
   */
  status(pendingWrites: number, now = Date.now(), shared = sharedClockMs()): StorageStatus {
    const field = (f: Field) => Number(Atomics.load(this.fields, f));
    const stallMs = this.options.stallMs ?? DEFAULT_STALL_MS;
    const phase = field(Field.Phase) as Phase;
    const syncSince = field(Field.SyncSince);
    const phaseStalled = phase !== Phase.Idle && shared - field(Field.PhaseSince) > stallMs;
    // A transaction held up (a lock first of all) is what stops commits; else a sync that takes too long.
    const syncStalled = !phaseStalled && syncSince > 0 && shared - syncSince > stallMs;
    const stalled = phaseStalled || syncStalled;
    const phaseSince = phaseStalled ? field(Field.PhaseSince) : syncSince;
    const lastCommitUs = field(Field.LastCommitUs);
    const state: StorageState = this.failure ? 'Failing' : stalled ? 'Stalled' : 'Ok';
    /** A time of the fields' clock as the wall-clock time as long ago. */
    const shown = (t: number) => new Date(now - (shared - t)).toISOString();
    const last = this.lastFailure;
    return {
      State: state,
      Since: shown(this.failure ? this.failure.since : state === 'Stalled' ? phaseSince : this.okSince),
      WaitingFor: stalled ? (phaseStalled && phase === Phase.Lock ? 'Lock' : 'Disk') : null,
      PendingWrites: pendingWrites,
      LastCommitMs: field(Field.Commits) > 0 ? Math.round(lastCommitUs / 100) / 10 : null,
      Commits: field(Field.Commits),
      Writes: field(Field.Writes),
      Syncs: field(Field.SyncedCommits),
      SyncInFlightMs: syncSince > 0 ? Math.max(0, Math.round(shared - syncSince)) : null,
      AckedBeforeSync: field(Field.AnsweredBeforeSync),
      LastError: this.failure?.error ?? null,
      Failures: this.failures,
      LastFailure: last && { At: shown(last.at), Error: last.error },
      ReadOnly: this.readOnly,
    };
  }
}
