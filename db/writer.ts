// The main thread's side of the one writer thread: start it, hand it commands, see the storage's
// state (db/storage-status.ts), close it; and the commands on their way to the thread and back
// (WriteQueue): batched per turn of the event loop (a few milliseconds for the writes nobody waits
// for at once, and for POSTs that come fast), cancelled if not started in time, answered after
// their commit.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DEFAULT_TIMING, WINDOW_MAX_WRITES } from './commit-plan';
import { projectRoot } from '../lib/host/root';
import { setWorkerSemiSpace } from '../lib/internals/node';
import type { WriteArgs, WriteOp, WriteResult } from './commands';
import { DEFAULT_STALL_MS, type StorageState, type StorageStatus, StorageMonitor } from './storage-status';
import {
  type Command,
  type CommitTiming,
  type FromWriter,
  type ToWriter,
  type WriterData,
  Cancel,
  FLAGS_PER_SLAB,
  Field,
  Phase,
  STATUS_FIELDS,
} from './writer-protocol';

/** Per command: give up if the writer has not started it within this long. */
export interface RunOptions {
  cancelAfterMs?: number;
}

/** The writer gave up on a command before starting it: nothing of it was written. */
export class WriteCancelled extends Error {
  constructor(
    readonly op: string,
    readonly afterMs: number,
  ) {
    super(`${op} not written: the storage did not start it within ${afterMs} ms`);
    this.name = 'WriteCancelled';
  }
}

/** A write that failed in the database (its own error, or its transaction's). */
export class WriteFailed extends Error {
  constructor(
    readonly op: string,
    reason: string,
  ) {
    super(`${op} failed: ${reason}`);
    this.name = 'WriteFailed';
  }
}

/** A committed write that owes a sync (db/commands.ts, `owesSync`): its result, and when it is durable. */
export interface Unsynced<T> {
  value: T;
  /** Resolves once a sync made it durable; rejects if that sync failed. */
  durable: Promise<void>;
  /** It is durable another way (the sorter acknowledged the entry): the writer owes it no sync. */
  durableElsewhere(): void;
}

/** A command's answer in a `done` message: its result, or why it failed. */
export type CommandResult = Extract<FromWriter, { type: 'done' }>['results'][number];

interface Waiting {
  op: WriteOp;
  /** performance.now() when run() was called. */
  at: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
  /** The slot of its cancel flag (FlagSlots), if it may be cancelled. */
  slot?: number;
  /** Owes a sync: resolved with an Unsynced once committed. */
  flag?: Int32Array;
}

interface Deferred {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * How long a write that nobody waits for at once may wait to go to the writer with others (ms):
 * half the commit window, at most COALESCE_MAX_MS. Each hand-over is a message to the writer
 * thread (a structured clone, a wake-up on both sides, each about 0.1 ms of CPU on this machine
 * when the thread slept). A sorter telegram's write then waits its commit window at the writer
 * (its ACK up to this wait and the window after it came, before its sync), a delivery's removal or
 * an acknowledged outbox entry is held (UnsyncedHoldMs). A busy event loop's delay past this wait
 * is made up by the writer (`Command.waited`: it counts window and hold that much earlier); the
 * wait itself is not, since counted it shortened the window and the hold at the writer, and each
 * item cost 27% more syncs and 15% more bytes at 30 items/s. What crosses sooner takes them along:
 * at 50 items/s a POST comes every 20 ms and carries what waits, so the timer seldom fires
 * (measured in 3 alternating pairs: the main thread's wake-ups 350 -> 290 a second, the writer's
 * 147 -> 93; CPU per item 10% less in one set of pairs, within the noise in another; 10 ms instead
 * of 2 had saved about 4% at 600 items/s). With a short window (HandOutBeforeCommit false: 5 ms,
 * and a decision waits it) the hand-over is as short. A POST's entry, and anything else, goes at
 * the end of the turn, with whatever waits. Sorter telegrams wait only while fewer than the commit
 * window may hold are waiting (`Gathering.telegrams`): a sorter that sends one telegram at a time
 * (a stop-and-wait layout's window of 1) waits for each one's ACK, so its telegram goes at the end
 * of the turn.
 */
export const coalesceMs = (windowMs: number): number => Math.min(COALESCE_MAX_MS, windowMs / 2);
const COALESCE_MAX_MS = 50;
const mayWait = (op: WriteOp) => op === 'acceptFromPeer' || op === 'deliver' || op === 'removeFromOutbox' || op === 'deadLetter';

/**
 * How long a POST's entry that goes to the sorter before its sync (`owesSync`) may wait on the
 * main thread for the next POST's, when POSTs come faster than one in this many milliseconds
 * (ms; config.json PostGroupMs). Each such entry is otherwise a hand-over to the writer thread and a
 * transaction of its own: at 600 items/s that is 600 commits a second, each writing its pages,
 * its WAL frame headers and its lock calls. Grouped, three or four POSTs share one hand-over and
 * one commit (measured at 600/s: 1.0 -> about 0.4 commits an item, about 9% less CPU an item).
 * The first of a group waits at most this long: its decision reaches the sorter that much later.
 * At tens of items a second the POSTs come further apart, and none waits.
 */
export const POST_GROUP_MS = 4;

/** How many POSTs' entries may wait for company at once: more go at once. */
export const POST_GROUP_MAX = 8;

/** How the commands wait for company before they cross to the writer (ms). */
export interface Gathering {
  /** A write nobody waits for at once: `coalesceMs` of the commit window. */
  coalesceMs: number;
  /** A POST's entry that owes a sync, while POSTs come less than this apart (PostGroupMs; 0: never). */
  postGroupMs: number;
  /**
   * Sorter telegrams that may wait together (the commit window's writes: the sorter's send window,
   * at most WINDOW_MAX_WRITES): the one that makes this many goes at the end of the turn with them.
   */
  telegrams: number;
}

/** How many committed commands are resolved before the event loop gets a turn (WriteQueue.settle). */
const SETTLE_CHUNK = 32;

/**
 * The commands' cancel flags (FLAGS_PER_SLAB in db/writer-protocol.ts), the main thread's side: a
 * slot for each command that may be cancelled, taken back once the writer thread will not look at
 * it again; a new slab when every slot is in use, announced to the writer before any command that
 * uses it (the announcement and the commands share one port, which keeps their order).
 */
export class FlagSlots {
  private readonly slabs: SharedArrayBuffer[] = [];
  private readonly free: number[] = [];

  constructor(private readonly announce: (index: number, slab: SharedArrayBuffer) => void) {}

  /** A free slot, and its flag set to Queued. */
  take(): { slot: number; flag: Int32Array } {
    if (this.free.length === 0) this.grow();
    const slot = this.free.pop() ?? -1;
    const flag = this.flag(slot);
    Atomics.store(flag, 0, Cancel.Queued);
    return { slot, flag };
  }

  /** The flag of a slot taken (a view made for the asking: what a slot keeps is its 4 bytes). */
  flag(slot: number): Int32Array {
    const slab = this.slabs[Math.floor(slot / FLAGS_PER_SLAB)];
    if (!slab) throw new Error(`cancel flag ${slot}: no such slot`);
    return new Int32Array(slab, (slot % FLAGS_PER_SLAB) * 4, 1);
  }

  /** The writer will not look at this slot's flag again: it may serve another command. */
  release(slot: number): void {
    this.free.push(slot);
  }

  /** Slots taken and not released. */
  get inUse(): number {
    return this.slabs.length * FLAGS_PER_SLAB - this.free.length;
  }

  private grow(): void {
    const index = this.slabs.length;
    const slab = new SharedArrayBuffer(FLAGS_PER_SLAB * Int32Array.BYTES_PER_ELEMENT);
    this.slabs.push(slab);
    // Lowest first: pop() takes from the end.
    for (let i = FLAGS_PER_SLAB - 1; i >= 0; i--) this.free.push(index * FLAGS_PER_SLAB + i);
    this.announce(index, slab);
  }
}

/**
 * The main thread's side of the commands: those given in one turn of the event loop go to the
 * writer together (`post`), and each waits for its answer. `onCommit` is told of each committed
 * transaction: its writes, and how long each waited for its answer (ms).
 */
export class WriteQueue {
  private readonly waiting = new Map<number, Waiting>();
  /** Committed writes waiting for their sync. */
  private readonly owing = new Map<number, Deferred>();
  /** Synced before their commit was settled here (settling goes in slices): `failure` or null. */
  private readonly syncedEarly = new Map<number, string | null>();
  private outgoing: Command[] = [];
  /** The hand-over at the end of this turn of the event loop, or once the coalescing delay is over. */
  private flushSoon: NodeJS.Immediate | null = null;
  private flushAt: NodeJS.Timeout | null = null;
  /** The hand-over of POSTs' entries waiting for company, at the latest. */
  private postsDue: NodeJS.Timeout | null = null;
  private postsWaiting = 0;
  /** Sorter telegrams given since the last hand-over. */
  private telegramsWaiting = 0;
  /** When the last POST's entry that owes a sync was given (performance.now()). */
  private lastPostAt = -Infinity;
  private seq = 0;
  /**
   * Slots whose flag the writer may still look at after their answer: a write that owes a sync
   * (until synced, or durable another way) and one cancelled here (until the writer has skipped it).
   */
  private readonly heldSlots = new Map<number, number>();

  /**
   * `flags`: the commands' cancel flags; the writer thread learns of each slab through its
   * announcement (without a writer thread, as in the tests, nobody need learn of them).
   */
  constructor(
    private readonly post: (batch: Command[]) => void,
    private readonly onCommit?: (writes: number, waitedMs: number[]) => void,
    private readonly gathering: Gathering = gatheringOf({}),
    private readonly flags: FlagSlots = new FlagSlots(() => {}),
  ) {}

  /** Commands given and not yet answered. */
  get pending(): number {
    return this.waiting.size;
  }

  /**
   * Queue a command; resolves with its result once its transaction is committed. With
   * `cancelAfterMs`, rejects with WriteCancelled if the writer has not started it by then
   * (it then never will); a command already started is waited for.
   */
  run<Op extends WriteOp>(op: Op, args: WriteArgs<Op>, options: RunOptions = {}): Promise<WriteResult<Op>> {
    return this.enqueue(op, args, options, false) as Promise<WriteResult<Op>>;
  }

  private enqueue(op: WriteOp, args: unknown[], options: RunOptions, unsynced: boolean): Promise<unknown> {
    const seq = ++this.seq;
    const command: Command = { seq, op, args };
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { op, at: performance.now(), resolve, reject };
      const { cancelAfterMs } = options;
      if (unsynced || cancelAfterMs !== undefined) {
        const { slot, flag } = this.flags.take();
        command.cancel = waiting.slot = slot;
        if (unsynced) waiting.flag = flag;
        if (cancelAfterMs !== undefined)
          waiting.timer = setTimeout(() => {
            if (Atomics.compareExchange(flag, 0, Cancel.Queued, Cancel.Cancelled) !== Cancel.Queued) return; // started: wait for it
            this.waiting.delete(seq);
            this.heldSlots.set(seq, slot); // until the writer says it skipped it
            reject(new WriteCancelled(op, cancelAfterMs));
          }, cancelAfterMs);
      }
      this.waiting.set(seq, waiting);
      this.outgoing.push(command);
      if (op === 'acceptFromPeer' && ++this.telegramsWaiting >= this.gathering.telegrams) {
        this.flushSoon ??= setImmediate(() => this.flush());
      } else if (mayWait(op)) {
        if (!this.flushAt && !this.flushSoon) this.flushAt = setTimeout(() => this.flush(), this.gathering.coalesceMs);
      } else if (unsynced && this.postComesFast(waiting.at)) {
        this.postsWaiting += 1;
        if (this.postsWaiting >= POST_GROUP_MAX) this.flushSoon ??= setImmediate(() => this.flush());
        else if (!this.postsDue && !this.flushSoon) this.postsDue = setTimeout(() => this.flush(), this.gathering.postGroupMs);
      } else if (!this.flushSoon) {
        this.flushSoon = setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Queue a write that owes a sync (db/commands.ts, `owesSync`): resolves once committed, before
   * its sync, with its result and a promise of its durability.
   */
  runUnsynced<Op extends WriteOp>(op: Op, args: WriteArgs<Op>, options: RunOptions = {}): Promise<Unsynced<WriteResult<Op>>> {
    return this.enqueue(op, args, options, true) as Promise<Unsynced<WriteResult<Op>>>;
  }

  /** Writes that owed a sync are durable now (or the sync failed). */
  synced(seqs: number[], failure: string | null): void {
    for (const seq of seqs) {
      this.releaseHeld(seq);
      const d = this.owing.get(seq);
      if (!d) {
        if (this.waiting.has(seq)) this.syncedEarly.set(seq, failure);
        continue;
      }
      this.owing.delete(seq);
      if (failure === null) d.resolve();
      else d.reject(new WriteFailed('sync', failure));
    }
  }

  /** Commands cancelled here, which the writer skipped: their flags serve again. */
  skipped(seqs: number[]): void {
    for (const seq of seqs) this.releaseHeld(seq);
  }

  private releaseHeld(seq: number): void {
    const slot = this.heldSlots.get(seq);
    if (slot === undefined) return;
    this.heldSlots.delete(seq);
    this.flags.release(slot);
  }

  /**
   * Whether a POST's entry given `at` waits for the next ones (POST_GROUP_MS): when it came less
   * than postGroupMs after the one before. Then up to POST_GROUP_MAX of them cross to the writer
   * together, postGroupMs after the first, and share one commit; one that came later goes at the
   * end of the turn. Notes `at` as the last POST's, so call it once for each.
   */
  private postComesFast(at: number): boolean {
    const gap = at - this.lastPostAt;
    this.lastPostAt = at;
    return gap < this.gathering.postGroupMs;
  }

  /** Hand what was given so far to the writer now. */
  flush(): void {
    if (this.flushSoon) clearImmediate(this.flushSoon);
    if (this.flushAt) clearTimeout(this.flushAt);
    if (this.postsDue) clearTimeout(this.postsDue);
    this.flushSoon = this.flushAt = this.postsDue = null;
    this.postsWaiting = this.telegramsWaiting = 0;
    if (this.outgoing.length === 0) return;
    const batch = this.outgoing;
    // How long each waited here past the hand-over's own wait, from when it was given (one cancelled
    // meanwhile is skipped by the writer): a busy event loop's delay, which the writer's window
    // and hold then make up for. The coalescing wait itself is not counted: counted, it shortened
    // the telegrams' window and the deliveries' hold at the writer, and at 30 items/s each item
    // cost 27% more syncs and 15% more bytes (test/e2e/write-budget.test.ts, 0.38 -> 0.48 syncs).
    const now = performance.now();
    for (const c of batch) c.waited = Math.max(0, now - (this.waiting.get(c.seq)?.at ?? now) - this.gathering.coalesceMs);
    this.outgoing = [];
    this.post(batch);
  }

  /**
   * Answer the commands of one transaction; `committed` false: it failed as a whole. `unsynced`:
   * the durable ones among them that wait for their sync (a `synced` answers them).
   */
  settle(results: CommandResult[], committed: boolean, unsynced: readonly number[] = []): void {
    this.settleFrom(results, 0, performance.now(), [], committed, unsynced.length > 0 ? new Set(unsynced) : null);
  }

  /** The writer is gone: every command still waiting fails with `why`. */
  failAll(why: string): void {
    for (const [, w] of this.waiting) {
      if (w.timer) clearTimeout(w.timer);
      if (w.slot !== undefined) this.flags.release(w.slot);
      w.reject(new WriteFailed(w.op, why));
    }
    this.waiting.clear();
    this.synced([...this.owing.keys()], why);
    this.skipped([...this.heldSlots.keys()]);
  }

  /**
   * Resolve the commands of one commit, SETTLE_CHUNK at a time: the backlog of a long lock (500
   * commands at 50 items/s for 10 s) settles in slices with the event loop's I/O in between, so a
   * /status, a telegram or a GET is not kept waiting behind the whole backlog's continuations.
   */
  private settleFrom(
    results: CommandResult[],
    from: number,
    now: number,
    waited: number[],
    committed: boolean,
    unsynced: ReadonlySet<number> | null,
  ): void {
    const to = Math.min(results.length, from + SETTLE_CHUNK);
    for (const [seq, ok, value] of results.slice(from, to)) {
      const w = this.waiting.get(seq);
      if (!w) continue;
      this.waiting.delete(seq);
      if (w.timer) clearTimeout(w.timer);
      // The writer looks at the flag of a write that owes a sync until it is synced (or durable another way).
      if (w.slot !== undefined) {
        if (ok && w.flag) this.heldSlots.set(seq, w.slot);
        else this.flags.release(w.slot);
      }
      waited.push(now - w.at);
      if (!ok) w.reject(new WriteFailed(w.op, value));
      else if (w.flag) w.resolve(this.unsynced(seq, value, w.flag));
      else if (unsynced?.has(seq)) this.awaitSync(seq, w, value);
      else w.resolve(value);
    }
    if (to < results.length) {
      setImmediate(() => this.settleFrom(results, to, now, waited, committed, unsynced));
      return;
    }
    if (committed && results.length > 0) this.onCommit?.(results.length, waited);
  }

  /**
   * A durable write committed, waiting for its sync: answered when the writer says it is synced
   * (rejected if the sync failed), or that it may be answered without (AckUnsyncedAfterMs).
   */
  private awaitSync(seq: number, w: Waiting, value: unknown): void {
    this.owing.set(seq, { resolve: () => w.resolve(value), reject: (err) => w.reject(err) });
    const failure = this.syncedEarly.get(seq);
    if (failure === undefined) return;
    this.syncedEarly.delete(seq);
    this.synced([seq], failure);
  }

  private unsynced(seq: number, value: unknown, flag: Int32Array): Unsynced<unknown> {
    const durable = new Promise<void>((resolve, reject) => this.owing.set(seq, { resolve, reject }));
    // Nobody need wait for it (the sorter's ACK may come first): a failed sync is the caller's to see, not an unhandled rejection.
    durable.catch(() => {});
    const failure = this.syncedEarly.get(seq);
    if (failure !== undefined) {
      this.syncedEarly.delete(seq);
      this.synced([seq], failure);
    }
    return {
      value,
      durable,
      durableElsewhere: () => {
        // Synced already: its flag may serve another command now.
        const d = this.owing.get(seq);
        if (!d) return;
        Atomics.compareExchange(flag, 0, Cancel.Taken, Cancel.DurableElsewhere);
        this.owing.delete(seq);
        // Before the writer reads it, the slot may serve another command: the writer then keeps
        // this write's sync owed until that flag says otherwise (a sync more, never one less).
        this.releaseHeld(seq);
        d.resolve();
      },
    };
  }
}

/**
 * A transaction phase longer than this (ms) means the storage is held up (an operator's lock, a
 * write that does not go through): messages from the sorter are then handed out only once
 * committed, since a WCS could not get its answers committed either (its POSTs would wait, then
 * 503). A slow or stalled sync does not count: commits go on beside it.
 */
const PROMPT_MS = 100;

/**
 * The worker threads' semi-space (MB; setWorkerSemiSpace): the writer's and the checkpointer's
 * garbage is small and short-lived, and 1 MB each (not the main thread's 4) keeps about 6 MB less
 * resident at 50 items/s, for the same CPU. Each sets it before it starts its thread.
 */
export const WORKER_SEMI_SPACE_MB = 1;

/** How to start the writer. */
export interface WriterOptions {
  file: string;
  synchronous: 'FULL' | 'NORMAL';
  /** false: one transaction per command (only to measure what group commit saves). */
  groupCommit: boolean;
  /** The commit window and the hold of unsynced writes (db/commit-plan.ts); its defaults if absent. */
  timing?: CommitTiming;
  /** While POSTs come faster than one in this many ms, a POST's entry that owes a sync waits this long for the next (WriteQueue above; POST_GROUP_MS if absent, 0: never). */
  postGroupMs?: number;
  migrationsDir?: string;
  /** A transaction or a sync in flight for longer than this counts as stalled (ms). */
  stallMs?: number;
  /** A sorter telegram committed whose sync has not ended this long after its commit is answered without it (ms; null or absent: only once synced). */
  ackUnsyncedAfterMs?: number | null;
  /** Told when the storage changes state (log lines). */
  onState?(state: StorageState, detail: string): void;
  /** Told of a sync that took longer than `stallMs` (the disk stalled), and of the telegrams answered before their sync meanwhile (a log line). */
  onSlowSync?(ms: number, answeredEarly: number): void;
  /** Told of each committed transaction: its writes, and how long each waited for its answer (ms, metrics). */
  onCommit?(writes: number, waitedMs: number[]): void;
}

/** How the writer's commands wait for company on the main thread, from its options: the commit window's. */
export const gatheringOf = (options: Pick<WriterOptions, 'timing' | 'postGroupMs'>): Gathering => ({
  coalesceMs: coalesceMs((options.timing ?? DEFAULT_TIMING).windowMs),
  postGroupMs: options.postGroupMs ?? POST_GROUP_MS,
  telegrams: options.timing?.maxWrites ?? WINDOW_MAX_WRITES,
});

/** How long Writer.giveUp waits for the thread to leave SQLite's wait for the lock: the busy timeout (db/connection.ts) and a margin. */
const GIVE_UP_MS = 6000;

/** The compiled worker entry (the writer runs compiled code, also when the caller is a ts-jest test). */
const WORKER = path.join(projectRoot, 'dist', 'db', 'writer-worker.js');

/**
 * The one writer (docs/queue-semantics.md, "Storage"): a worker thread owns the only connection
 * that writes the queue database, so the event loop never waits for the disk. Writes are
 * commands (db/commands.ts); each is answered only after the transaction that carries it is
 * committed. Commands given in one turn of the event loop travel together, and the writer
 * commits everything that arrived during its previous commit in the next one (pipelined group
 * commit). The main thread reads through its own read-only connection.
 */
export class Writer {
  private readonly queue: WriteQueue;
  private readonly monitor: StorageMonitor;
  private closedResolve: (() => void) | null = null;
  /** Why the thread is gone, if it is (a bug: database errors are answers, not exits). */
  private gone: string | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly status64: BigInt64Array,
    readOnly: boolean,
    private readonly options: WriterOptions,
  ) {
    this.queue = new WriteQueue(
      (batch) => worker.postMessage(batch satisfies ToWriter),
      (writes, waitedMs) => options.onCommit?.(writes, waitedMs),
      gatheringOf(options),
      new FlagSlots((index, slab) => worker.postMessage({ type: 'flags', index, slab } satisfies ToWriter)),
    );
    this.monitor = new StorageMonitor(status64, readOnly, options);
    worker.on('message', (m: FromWriter) => this.onMessage(m));
    worker.on('error', (err) => this.stopped(`the writer thread failed: ${err.message}`));
    worker.on('exit', (code) => this.stopped(`the writer thread exited (${code})`));
  }

  /** Start the writer thread: it opens the database and applies the migrations. */
  static start(options: WriterOptions): Promise<Writer> {
    if (!fs.existsSync(WORKER)) throw new Error(`${WORKER} is missing: run npm run build`);
    const status = new SharedArrayBuffer(STATUS_FIELDS * 8);
    const workerData: WriterData = {
      file: options.file,
      synchronous: options.synchronous,
      groupCommit: options.groupCommit,
      timing: options.timing,
      ackUnsyncedAfterMs: options.ackUnsyncedAfterMs ?? null,
      migrationsDir: options.migrationsDir,
      slowSyncMs: options.stallMs ?? DEFAULT_STALL_MS,
      status,
    };
    // It only moves small commands: a small young generation keeps its memory down (peak RSS of
    // the service under load is a goal, docs/performance.md); the old one has room for seeding batches.
    setWorkerSemiSpace(WORKER_SEMI_SPACE_MB);
    const worker = new Worker(WORKER, { workerData, resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 96 } });
    return new Promise((resolve, reject) => {
      const onMessage = (m: FromWriter) => {
        if (m.type === 'failed-to-open') reject(new Error(`cannot open ${options.file}: ${m.error}`));
        if (m.type !== 'ready') return;
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve(new Writer(worker, new BigInt64Array(status), m.readOnly, options));
      };
      const onExit = (code: number) => reject(new Error(`cannot open ${options.file}: the writer thread exited (${code})`));
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });
  }

  /**
   * Run a write command; resolves with its result once its transaction is committed. With
   * `cancelAfterMs`, rejects with WriteCancelled if the writer has not started it by then
   * (it then never will); a command already started is waited for.
   */
  run<Op extends WriteOp>(op: Op, args: WriteArgs<Op>, options: RunOptions = {}): Promise<WriteResult<Op>> {
    if (this.closedResolve || this.gone) return Promise.reject(new WriteFailed(op, this.gone ?? 'the writer is closing'));
    return this.queue.run(op, args, options);
  }

  /**
   * Run a write that owes a sync (db/commands.ts, `owesSync`): resolves once committed, before its
   * sync, with its result and a promise of its durability (the next synced commit, or a sync of
   * the WAL within the commit window, unless `durableElsewhere()` is called first).
   */
  runUnsynced<Op extends WriteOp>(op: Op, args: WriteArgs<Op>, options: RunOptions = {}): Promise<Unsynced<WriteResult<Op>>> {
    if (this.closedResolve || this.gone) return Promise.reject(new WriteFailed(op, this.gone ?? 'the writer is closing'));
    return this.queue.runUnsynced(op, args, options);
  }

  /**
   * Commits go through promptly (not failing, no phase of a transaction longer than `maxMs`):
   * a message may then be handed out before its commit (lib/queue/dispatcher.ts, UncommittedMessages).
   */
  prompt(maxMs = PROMPT_MS): boolean {
    return this.monitor.prompt(maxMs);
  }

  /** The storage as /status shows it. */
  status(now = Date.now()): StorageStatus {
    return this.monitor.status(this.queue.pending, now);
  }

  /** Finish what was given, close the database, end the thread. */
  close(): Promise<void> {
    if (this.closedResolve) return Promise.resolve();
    return new Promise((resolve) => {
      this.closedResolve = resolve;
      this.queue.flush();
      this.worker.postMessage({ type: 'close' } satisfies ToWriter);
    });
  }

  /**
   * The process is about to end with writes still waiting (the stop's time limit, an operator's
   * lock): the writer thread stops waiting for the write lock, and this resolves once it is out of
   * SQLite's wait (its busy timeout, 5 s, at most) or after `maxMs`. Exiting while it waits there
   * would abort the process instead of ending it with its exit code (beginTransaction in
   * db/writer-thread.ts). What waited fails; nothing of it was written.
   */
  async giveUp(maxMs = GIVE_UP_MS): Promise<void> {
    Atomics.store(this.status64, Field.GiveUp, 1n);
    const until = Date.now() + maxMs;
    while (!this.gone && Number(Atomics.load(this.status64, Field.Phase)) === Phase.Lock && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private onMessage(m: FromWriter): void {
    if (m.type === 'closed') return this.closedResolve?.();
    if (m.type === 'synced') return this.queue.synced(m.seqs, m.failure);
    if (m.type === 'skipped') return this.queue.skipped(m.seqs);
    if (m.type === 'slow-sync') return this.options.onSlowSync?.(m.ms, m.answeredEarly);
    if (m.type !== 'done') return;
    if (m.failure) this.monitor.failed(m.failure);
    else if (m.results.length > 0) this.monitor.committed();
    this.queue.settle(m.results, m.failure === null, m.unsynced);
  }

  /** The thread is gone: every write still waiting fails, and the storage is failing for good. */
  private stopped(why: string): void {
    if (this.closedResolve) return this.closedResolve();
    if (this.gone) return;
    this.gone = why;
    this.monitor.failed(why);
    this.queue.failAll(why);
  }
}
