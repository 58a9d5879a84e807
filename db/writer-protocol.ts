// The messages between the main thread and the writer thread, and the shared status fields.
import type { WriteOp } from './commands';

/** What the main thread and the writer thread (db/writer.ts, db/writer-thread.ts) say to each other. */

/**
 * The commands' cancel flags (`Cancel`) are Int32s in slabs of shared memory of this many, each
 * slab sent to the writer thread once (db/writer.ts, FlagSlots), not a SharedArrayBuffer of each
 * command's own: that was allocated, cloned into the writer and collected on both threads for
 * every POST.
 */
export const FLAGS_PER_SLAB = 256;

/** One write, as data. `cancel` (the slot of its flag, an Int32 in shared memory: FLAGS_PER_SLAB) lets the main thread give up on it. */
export interface Command {
  seq: number;
  op: WriteOp;
  args: unknown[];
  cancel?: number;
  /**
   * How long it waited on the main thread before it crossed, past the hand-over's own wait for
   * company (ms; db/writer.ts, coalesceMs): a busy event loop's delay. The writer counts its commit
   * window and its hold that much earlier, so that such a delay does not add to them (the
   * threads' clocks have origins of their own, so a duration crosses, not a time).
   */
  waited?: number;
}

/** States of a command's cancel flag: the first of main (cancel) and writer (take) to swap it wins. */
export const enum Cancel {
  Queued = 0,
  Taken = 1,
  Cancelled = 2,
  /** Set by the main thread on a write that owes a sync (db/commands.ts, `owesSync`): it is durable another way now, the sync is not owed. */
  DurableElsewhere = 3,
}

/** What the writer is doing, in shared memory so that it can be read while the writer is blocked. */
export const enum Phase {
  Idle = 0,
  /** BEGIN IMMEDIATE: waiting for the write lock (another connection holds it). */
  Lock = 1,
  /** Running the statements. */
  Write = 2,
  /** A disk sync on this thread: only at a stop, or a checkpoint (the commits' syncs run beside it: SyncSince). */
  Sync = 3,
}

/** Slots of the shared status array (BigInt64). */
export const enum Field {
  Phase = 0,
  /** When the phase began (db/storage-status.ts, sharedClockMs). */
  PhaseSince = 1,
  LastCommitUs = 2,
  Commits = 3,
  Writes = 4,
  /** Disk syncs of the WAL (beside the commits, or at a stop): for durable writes, and for writes that owed one. */
  SyncedCommits = 5,
  /** When the sync of the WAL in flight began (db/storage-status.ts, sharedClockMs; it runs beside the writer, not in it), 0 when none is. */
  SyncSince = 6,
  /** Sorter telegrams answered before their sync ended (AckUnsyncedAfterMs). */
  AnsweredBeforeSync = 7,
  /** Set by the main thread as the process ends with writes still waiting (the stop's time limit): stop waiting for the write lock. */
  GiveUp = 8,
}
export const STATUS_FIELDS = 9;

/** The writer thread's side of the shared status fields: it writes them, the main thread reads them (db/storage-status.ts). */
export class StatusFields {
  private readonly slots: BigInt64Array;

  constructor(
    buffer: SharedArrayBuffer,
    /** The clock of the fields' times: db/storage-status.ts, sharedClockMs. */
    private readonly clock: () => number,
  ) {
    this.slots = new BigInt64Array(buffer);
  }

  set(field: Field, value: number): void {
    Atomics.store(this.slots, field, BigInt(Math.round(value)));
  }

  add(field: Field, n: number): void {
    Atomics.add(this.slots, field, BigInt(n));
  }

  /** Now, on the fields' clock. */
  now(): number {
    return this.clock();
  }

  get(field: Field): bigint {
    return Atomics.load(this.slots, field);
  }

  /** The writer begins `phase` now. */
  phase(phase: Phase): void {
    this.set(Field.PhaseSince, this.clock());
    this.set(Field.Phase, phase);
  }
}

/** An error as the text a `done`, `synced` or `failed-to-open` message carries: its code first, when it has one (db/lasting-failure.ts reads it). */
export function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message}` : String(e.message ?? err);
}

/**
 * The writer's timing: `windowMs` a sorter telegram's write waits for company (a POST's does not:
 * db/commit-plan.ts), `holdMs` a write that needs no sync may be held (config.json
 * `CommitWindowMs` and `UnsyncedHoldMs`; by default WINDOW_MS and HOLD_MS of db/commit-plan.ts).
 * Longer writes less, at the price of the acknowledgements' latency and of the repeats after a
 * crash (docs/performance.md, "Settings that change the writes").
 */
export interface CommitTiming {
  windowMs: number;
  holdMs: number;
  /** At most this many sorter telegrams wait in the window (WINDOW_MAX_WRITES, or fewer: the sorter's send window). */
  maxWrites?: number;
}

/** The writer thread's workerData. */
export interface WriterData {
  file: string;
  synchronous: 'FULL' | 'NORMAL';
  groupCommit: boolean;
  /** The commit window and the hold of unsynced writes (db/commit-plan.ts); its defaults if absent. */
  timing?: CommitTiming;
  /** A sorter telegram committed whose sync has not ended this long after its commit, or that committed during a sync already that long, is answered without it (ms; null: only once synced). */
  ackUnsyncedAfterMs: number | null;
  migrationsDir?: string;
  /** A sync that takes longer than this is reported (`slow-sync`, ms). */
  slowSyncMs: number;
  status: SharedArrayBuffer;
}

/** To the writer thread: a batch of commands, a slab of their cancel flags (before the first command that uses it), or `close`. */
export type ToWriter = Command[] | { type: 'flags'; index: number; slab: SharedArrayBuffer } | { type: 'close' };

/** From the writer thread. A `done` carries each command's result, or a whole transaction's failure. */
export type FromWriter =
  | { type: 'ready'; readOnly: boolean }
  | { type: 'failed-to-open'; error: string }
  /** `unsynced`: the durable commands among them committed but not yet synced; a `synced` names them later. */
  | { type: 'done'; results: Array<[number, true, unknown] | [number, false, string]>; failure: string | null; unsynced?: number[] }
  /** Writes committed and reported before (owed a sync, or durable and waiting for it) are durable now; `failure`: the sync failed, they may not be. */
  | { type: 'synced'; seqs: number[]; failure: string | null }
  /** Commands the main thread had cancelled, skipped (never written): their flags are free again. */
  | { type: 'skipped'; seqs: number[] }
  /** A sync of the WAL took `ms`, longer than the stall threshold; `answeredEarly` telegrams were answered before their sync meanwhile. */
  | { type: 'slow-sync'; ms: number; answeredEarly: number }
  | { type: 'closed' };
