// The main thread's side of the one writer thread: run a command, learn its result after its
// commit, see the storage's state.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { projectRoot } from './root';
import type { WriteArgs, WriteOp, WriteResult } from './commands';
import { type Command, type FromWriter, type WriterData, Cancel, Field, Phase, STATUS_FIELDS } from './writer-protocol';

/**
 * The one writer (docs/queue-semantics.md, "Storage"): a worker thread owns the only connection
 * that writes the queue database, so the event loop never waits for the disk. Writes are
 * commands (db/commands.ts); each is answered only after the transaction that carries it is
 * committed. Commands given in one turn of the event loop travel together, and the writer
 * commits everything that arrived during its previous commit in the next one (pipelined group
 * commit). The main thread reads through its own read-only connection.
 */

/** How to start the writer. */
export interface WriterOptions {
  file: string;
  synchronous: 'FULL' | 'NORMAL';
  /** false: one transaction per command (only to measure what group commit saves). */
  groupCommit: boolean;
  migrationsDir?: string;
  /** A transaction in flight for longer than this counts as stalled (ms). */
  stallMs?: number;
  /** Told when the storage changes state (log lines). */
  onState?(state: StorageState, detail: string): void;
  /** Told of each committed transaction: its writes, and how long each waited for its answer (ms, metrics). */
  onCommit?(writes: number, waitedMs: number[]): void;
}

/** Per command: give up if the writer has not started it within this long. */
export interface RunOptions {
  cancelAfterMs?: number;
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
  /** Failing: why the last transaction failed. */
  LastError: string | null;
  ReadOnly: boolean;
}

/** The writer gave up on a command before starting it: nothing of it was written. */
export class WriteCancelled extends Error {
  constructor(readonly op: string, readonly afterMs: number) {
    super(`${op} not written: the storage did not start it within ${afterMs} ms`);
    this.name = 'WriteCancelled';
  }
}

/** A write that failed in the database (its own error, or its transaction's). */
export class WriteFailed extends Error {
  constructor(readonly op: string, reason: string) {
    super(`${op} failed: ${reason}`);
    this.name = 'WriteFailed';
  }
}

interface Waiting {
  op: WriteOp;
  /** performance.now() when run() was called. */
  at: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

/** The compiled worker entry (the writer runs compiled code, also when the caller is a ts-jest test). */
const WORKER = path.join(projectRoot, 'dist', 'db', 'writer-worker.js');
const DEFAULT_STALL_MS = 1000;

/** The main thread's handle on the writer thread. */
/** How many committed commands are resolved before the event loop gets a turn (Writer.settle). */
const SETTLE_CHUNK = 32;

export class Writer {
  private readonly waiting = new Map<number, Waiting>();
  private outgoing: Command[] = [];
  private flushScheduled = false;
  private seq = 0;
  private failure: { since: string; error: string } | null = null;
  private okSince = new Date().toISOString();
  private closedResolve: (() => void) | null = null;
  /** Why the thread is gone, if it is (a bug: database errors are answers, not exits). */
  private gone: string | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly status64: BigInt64Array,
    private readonly readOnly: boolean,
    private readonly options: WriterOptions,
  ) {
    worker.on('message', (m: FromWriter) => this.onMessage(m));
    worker.on('error', (err) => this.stopped(`the writer thread failed: ${err.message}`));
    worker.on('exit', (code) => this.stopped(`the writer thread exited (${code})`));
    if (readOnly) this.failure = { since: this.okSince, error: 'the database file is read-only' };
  }

  /** Start the writer thread: it opens the database and applies the migrations. */
  static start(options: WriterOptions): Promise<Writer> {
    if (!fs.existsSync(WORKER)) throw new Error(`${WORKER} is missing: run npm run build`);
    const status = new SharedArrayBuffer(STATUS_FIELDS * 8);
    const workerData: WriterData = { file: options.file, synchronous: options.synchronous, groupCommit: options.groupCommit, migrationsDir: options.migrationsDir, status };
    // It only moves small commands: a small young generation keeps its memory down (peak RSS of
    // the service under load is a goal, docs/performance.md); the old one has room for seeding batches.
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
    const seq = ++this.seq;
    const command: Command = { seq, op, args };
    if (this.closedResolve || this.gone) return Promise.reject(new WriteFailed(op, this.gone ?? 'the writer is closing'));
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { op, at: performance.now(), resolve: resolve as (v: unknown) => void, reject };
      if (options.cancelAfterMs !== undefined) {
        command.cancel = new SharedArrayBuffer(4);
        const flag = new Int32Array(command.cancel);
        waiting.timer = setTimeout(() => {
          if (Atomics.compareExchange(flag, 0, Cancel.Queued, Cancel.Cancelled) !== Cancel.Queued) return; // started: wait for it
          this.waiting.delete(seq);
          reject(new WriteCancelled(op, options.cancelAfterMs!));
        }, options.cancelAfterMs);
      }
      this.waiting.set(seq, waiting);
      this.outgoing.push(command);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** The storage as /status shows it. */
  status(now = Date.now()): StorageStatus {
    const field = (f: Field) => Number(Atomics.load(this.status64, f));
    const phase = field(Field.Phase) as Phase;
    const phaseSince = field(Field.PhaseSince);
    const stalled = phase !== Phase.Idle && now - phaseSince > (this.options.stallMs ?? DEFAULT_STALL_MS);
    const lastCommitUs = field(Field.LastCommitUs);
    const state: StorageState = this.failure ? 'Failing' : stalled ? 'Stalled' : 'Ok';
    return {
      State: state,
      Since: state === 'Failing' ? this.failure!.since : state === 'Stalled' ? new Date(phaseSince).toISOString() : this.okSince,
      WaitingFor: stalled ? (phase === Phase.Lock ? 'Lock' : 'Disk') : null,
      PendingWrites: this.waiting.size,
      LastCommitMs: field(Field.Commits) > 0 ? Math.round(lastCommitUs / 100) / 10 : null,
      Commits: field(Field.Commits),
      Writes: field(Field.Writes),
      LastError: this.failure?.error ?? null,
      ReadOnly: this.readOnly,
    };
  }

  /** Finish what was given, close the database, end the thread. */
  close(): Promise<void> {
    if (this.closedResolve) return Promise.resolve();
    return new Promise((resolve) => {
      this.closedResolve = resolve;
      this.flush();
      this.worker.postMessage({ type: 'close' });
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.outgoing.length === 0) return;
    const batch = this.outgoing;
    this.outgoing = [];
    this.worker.postMessage(batch);
  }

  private onMessage(m: FromWriter): void {
    if (m.type === 'closed') return this.closedResolve?.();
    if (m.type !== 'done') return;
    if (m.failure) this.failed(m.failure);
    else if (m.results.length > 0 && this.failure && !this.readOnly) this.recovered();
    this.settle(m.results, 0, performance.now(), [], m.failure === null);
  }

  /**
   * Resolve the commands of one commit, SETTLE_CHUNK at a time: the backlog of a long lock (500
   * commands at 50 items/s for 10 s) settles in slices with the event loop's I/O in between, so a
   * /status, a telegram or a GET is not kept waiting behind the whole backlog's continuations.
   */
  private settle(results: Extract<FromWriter, { type: 'done' }>['results'], from: number, now: number, waited: number[], committed: boolean): void {
    const to = Math.min(results.length, from + SETTLE_CHUNK);
    for (let i = from; i < to; i++) {
      const [seq, ok, value] = results[i];
      const w = this.waiting.get(seq);
      if (!w) continue;
      this.waiting.delete(seq);
      if (w.timer) clearTimeout(w.timer);
      waited.push(now - w.at);
      if (ok) w.resolve(value);
      else w.reject(new WriteFailed(w.op, value as string));
    }
    if (to < results.length) {
      setImmediate(() => this.settle(results, to, now, waited, committed));
      return;
    }
    if (committed && results.length > 0) this.options.onCommit?.(results.length, waited);
  }

  private failed(error: string): void {
    if (!this.failure) {
      this.failure = { since: new Date().toISOString(), error };
      this.options.onState?.('Failing', error);
    } else this.failure.error = error;
  }

  private recovered(): void {
    this.failure = null;
    this.okSince = new Date().toISOString();
    this.options.onState?.('Ok', 'commits succeed again');
  }

  /** The thread is gone: every write still waiting fails, and the storage is failing for good. */
  private stopped(why: string): void {
    if (this.closedResolve) return this.closedResolve();
    if (this.gone) return;
    this.gone = why;
    this.failed(why);
    for (const [, w] of this.waiting) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(new WriteFailed(w.op, why));
    }
    this.waiting.clear();
  }
}
