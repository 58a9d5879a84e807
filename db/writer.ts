// The main thread's side of the one writer thread: start it, hand it commands (db/write-queue.ts),
// see the storage's state (db/storage-status.ts), close it.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DEFAULT_TIMING } from './commit-plan';
import { projectRoot } from '../lib/host/root';
import type { WriteArgs, WriteOp, WriteResult } from './commands';
import { DEFAULT_STALL_MS, type StorageState, type StorageStatus, StorageMonitor } from './storage-status';
import { POST_GROUP_MS, type RunOptions, type Unsynced, WriteFailed, WriteQueue, coalesceMs } from './write-queue';
import { type CommitTiming, type FromWriter, type WriterData, STATUS_FIELDS } from './writer-protocol';

/**
 * A transaction phase longer than this (ms) means the storage is held up (an operator's lock, a
 * write that does not go through): messages from the sorter are then handed out only once
 * committed, since a WCS could not get its answers committed either (its POSTs would wait, then
 * 503). A slow or stalled sync does not count: commits go on beside it.
 */
const PROMPT_MS = 100;

/** How to start the writer. */
export interface WriterOptions {
  file: string;
  synchronous: 'FULL' | 'NORMAL';
  /** false: one transaction per command (only to measure what group commit saves). */
  groupCommit: boolean;
  /** The commit window and the hold of unsynced writes (db/commit-plan.ts); its defaults if absent. */
  timing?: CommitTiming;
  /** While POSTs come faster than one in this many ms, a POST's entry that owes a sync waits this long for the next (db/write-queue.ts; POST_GROUP_MS if absent, 0: never). */
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
    status64: BigInt64Array,
    readOnly: boolean,
    private readonly options: WriterOptions,
  ) {
    const gathering = {
      coalesceMs: coalesceMs((options.timing ?? DEFAULT_TIMING).windowMs),
      postGroupMs: options.postGroupMs ?? POST_GROUP_MS,
    };
    this.queue = new WriteQueue(
      (batch) => worker.postMessage(batch),
      (writes, waitedMs) => options.onCommit?.(writes, waitedMs),
      gathering,
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
      this.worker.postMessage({ type: 'close' });
    });
  }

  private onMessage(m: FromWriter): void {
    if (m.type === 'closed') return this.closedResolve?.();
    if (m.type === 'synced') return this.queue.synced(m.seqs, m.failure);
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
