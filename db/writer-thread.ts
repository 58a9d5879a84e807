// The writer thread's work (db/writer-worker.ts starts it): the one connection that writes the
// queue database, its transactions (pipelined group commit), and its stop.
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import { isDurable, isOutsideTransaction, outsideTransactionCommands, owesSync, writeCommands } from './commands';
import { DEFAULT_TIMING, type Held, type Plan, planTransaction, wakeAt } from './commit-plan';
import { type Db, openDatabase } from './connection';
import { type OutboxWrites, RESERVED_IDS_AT_A_TIME, outboxWrites } from './outbox-store';
import { sharedClockMs } from './storage-status';
import { type Owed, WalSync } from './wal-sync';
import {
  type Command,
  type CommitTiming,
  type FromWriter,
  FLAGS_PER_SLAB,
  type ToWriter,
  type WriterData,
  Cancel,
  Field,
  Phase,
  StatusFields,
  errorText,
} from './writer-protocol';

type Result = [number, true, unknown] | [number, false, string];
type OutsideCommands = ReturnType<typeof outsideTransactionCommands>;

/** What a transaction wrote, told once it is committed. */
interface Written {
  /** The commands claimed for it, in order. */
  taken: Command[];
  results: Result[];
  /** The commands among them that owe a sync (db/commands.ts, `owesSync`). */
  owing: Command[];
  /** It moved new outbox ids above every reserved one. */
  skipping: boolean;
  /** The outbox ids it reserved, up to this (0: none). */
  reserving: number;
}

/**
 * The writer thread: takes the main thread's commands from its port, commits them (db/commit-plan.ts
 * says which go together and whether synced), tells the main thread of each, and has the WAL
 * synced for those that must be durable (db/wal-sync.ts).
 */
export class WriterThread {
  private readonly status: StatusFields;
  /** The commit window and the hold (config.json CommitWindowMs, UnsyncedHoldMs). */
  private readonly timing: CommitTiming;
  /** AckUnsyncedAfterMs (null: a sorter telegram is answered only once synced): WalSync. */
  private readonly earlyAfterMs: number | null;
  /** While the disk stalls, a sorter telegram's write waits for no window (WalSync.stalled). */
  private readonly stallTiming: CommitTiming;
  private readonly wal: WalSync;
  private readonly outsideCommands: OutsideCommands;
  /** Each command in a savepoint of the batch's transaction: a failing one is undone alone. */
  private readonly inSavepoint: (c: Command) => unknown;
  /** The outbox ids that may reach the sorter before their rows are synced (migrations/011). */
  private readonly reservation: OutboxWrites;
  /** Ids up to this are reserved, durably. */
  private reservedUpTo = 0;
  /** New outbox rows take ids above every reserved one: done in the first transaction that adds one. */
  private skippedReserved = false;
  /** Arrived from the main thread, not yet looked at. */
  private readonly pending: Held[] = [];
  /** Transactional commands in the order given, waiting for their transaction (db/commit-plan.ts). */
  private queued: Held[] = [];
  /** Checkpoints, run between transactions. */
  private readonly outside: Held[] = [];
  /** The slabs of the commands' cancel flags (FLAGS_PER_SLAB), as the main thread sent them. */
  private readonly flagSlabs: SharedArrayBuffer[] = [];
  private closing = false;
  private wake: NodeJS.Timeout | null = null;

  private constructor(
    private readonly port: MessagePort,
    private readonly data: WriterData,
    private readonly db: Db,
  ) {
    this.status = new StatusFields(data.status, sharedClockMs);
    this.timing = data.timing ?? DEFAULT_TIMING;
    this.stallTiming = { ...this.timing, windowMs: 0 };
    this.earlyAfterMs = data.ackUnsyncedAfterMs ?? null;
    this.wal = new WalSync({
      file: data.file,
      earlyAfterMs: this.earlyAfterMs,
      slowSyncMs: data.slowSyncMs,
      status: this.status,
      post: (m) => this.post(m),
      onSyncEnded: () => this.runDueWork(),
    });
    // Checkpoints run on their own thread (db/checkpointer.ts), never inside a commit; it also keeps
    // the WAL from growing into the disk's free space. (Not journal_size_limit: at 1,000 items/s the
    // WAL passes any small limit between restarts, and the file would be cut back at every restart.)
    db.pragma('wal_autocheckpoint = 0');
    const commands = writeCommands(db);
    this.outsideCommands = outsideTransactionCommands(db);
    this.inSavepoint = db.transaction((c: Command) => {
      const run = (commands as Record<string, ((...a: unknown[]) => unknown) | undefined>)[c.op];
      if (!run) throw new Error(`unknown write command ${c.op}`);
      return run(...c.args);
    });
    this.reservation = outboxWrites(db);
    /**
     * With Synchronous FULL, no commit syncs inside COMMIT: the connection commits with NORMAL (in WAL
     * mode: its frames written to the WAL, in the page cache, safe from a crash of the process) and
     * the WAL is synced beside this thread (WalSync.startSync), so that a slow or stalled sync holds up the
     * answers that wait for it (a sorter telegram's ACK) and nothing else: a POST's entry, a delivery,
     * the next commit go on meanwhile. A write that must be durable is answered once a sync that began
     * after its commit has ended: in WAL mode a commit is durable once the WAL holds it on the disk.
     */
    if (data.synchronous === 'FULL') db.pragma('synchronous = NORMAL');
  }

  /** Open the database and apply the migrations; null when that failed (told to the main thread: `failed-to-open`). */
  static open(port: MessagePort, data: WriterData): WriterThread | null {
    try {
      return new WriterThread(port, data, openDatabase(data.file, { synchronous: data.synchronous, migrationsDir: data.migrationsDir }));
    } catch (err) {
      port.postMessage({ type: 'failed-to-open', error: errorText(err) } satisfies FromWriter);
      return null;
    }
  }

  /** Listen to the main thread, and tell it the writer is ready (and whether the file can be written). */
  start(): void {
    // At once: what else is queued is taken from the port by runDueWork() itself.
    this.port.on('message', (message) => {
      this.receive(message);
      this.runDueWork();
    });
    this.status.phase(Phase.Idle);
    this.post({ type: 'ready', readOnly: !this.canWrite() });
  }

  private post(message: FromWriter): void {
    this.port.postMessage(message);
  }

  /** A message from the main thread: a batch of commands, a slab of their cancel flags, or `close`. */
  private receive(message: unknown): void {
    const m = message as ToWriter;
    if (Array.isArray(m)) {
      const at = performance.now();
      for (const c of m as Held[]) {
        c.at = at - (c.waited ?? 0);
        this.pending.push(c);
      }
    } else if (m.type === 'flags') this.flagSlabs[m.index] = m.slab;
    else this.closing = true;
  }

  /** A command's cancel flag, if it has one. */
  private flagOf(c: Command): Int32Array | null {
    if (c.cancel === undefined) return null;
    const slab = this.flagSlabs[Math.floor(c.cancel / FLAGS_PER_SLAB)];
    if (!slab) throw new Error(`cancel flag ${c.cancel}: its slab never reached the writer`);
    return new Int32Array(slab, (c.cancel % FLAGS_PER_SLAB) * 4, 1);
  }

  /**
   * The commands of `batch` to run: a command the main thread gave up on (it answered 503) is
   * skipped, nothing half-written, and the main thread told, so that its flag serves again.
   */
  private claimed(batch: Command[]): Command[] {
    const taken: Command[] = [];
    const skipped: number[] = [];
    for (const c of batch) {
      const flag = this.flagOf(c);
      if (!flag || Atomics.compareExchange(flag, 0, Cancel.Queued, Cancel.Taken) === Cancel.Queued) taken.push(c);
      else skipped.push(c.seq);
    }
    if (skipped.length > 0) this.post({ type: 'skipped', seqs: skipped });
    return taken;
  }

  /** Everything that arrived while this thread was busy (or blocked), without waiting for the event loop. */
  private receiveWaiting(): void {
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) this.receive(m.message);
  }

  /** The commands received go to the transactions' queue, or, checkpoints, to be run between transactions. */
  private sortReceived(): void {
    for (const c of this.pending.splice(0)) (isOutsideTransaction(c.op) ? this.outside : this.queued).push(c);
  }

  /**
   * Pipelined group commit: every command that arrived while the previous transaction was being
   * committed goes into the next one, which starts as soon as that one is done, as far as
   * db/commit-plan.ts lets it: a durable write waits a few milliseconds for others to share its
   * sync, a write that needs none is held back to be committed with others.
   */
  private runDueWork(): void {
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    this.receiveWaiting();
    for (;;) {
      this.sortReceived();
      // A checkpoint syncs on this thread: not while a sync is in flight (the disk may be stalled:
      // it would hold up every commit behind it); it runs as that sync ends.
      if (!this.wal.inFlight) for (const c of this.outside.splice(0)) this.runOutsideTransaction(c);
      if (this.wal.owes) this.payOwed(performance.now());
      this.wal.answerEarly(performance.now());
      if (this.queued.length === 0) break;
      if (!this.commitNext()) break;
      this.receiveWaiting();
    }
    if (this.closing && this.queued.length === 0) {
      if (!this.wal.inFlight) this.stop(); // else it calls runDueWork() as it ends
      return;
    }
    this.scheduleWake();
  }

  /** Commit what the plan says is due now; false when everything queued may wait longer. */
  private commitNext(): boolean {
    if (!this.data.groupCommit) {
      for (const c of this.queued.splice(0)) this.commitPlan({ batch: [c], rest: this.queued, synced: isDurable(c.op) });
      return true;
    }
    const now = performance.now();
    const plan = planTransaction(this.queued, this.closing ? Infinity : now, false, this.currentTiming(now));
    if (!plan) return false;
    this.commitPlan(plan);
    return true;
  }

  private currentTiming(now: number): CommitTiming {
    return this.wal.stalled(now) ? this.stallTiming : this.timing;
  }

  /** Run again when the queued commands' plan, an owed sync or an early answer is due. */
  private scheduleWake(): void {
    const queuedDue = this.queued.length > 0 ? wakeAt(this.queued, this.currentTiming(performance.now())) : Infinity;
    const next = Math.min(queuedDue, this.wal.owedDue(), this.wal.earlyDue());
    if (next < Infinity) this.wake = setTimeout(() => this.runDueWork(), Math.max(0, next - performance.now()));
  }

  /**
   * Writes that owe a sync are due one once the oldest has waited the commit window (at once when
   * closing), unless the main thread said they are durable another way (the sorter acknowledged
   * the entry). Then the durable writes waiting in their window go now, synced, if there are any
   * (their sync takes the owed ones along); else the WAL is synced for them alone.
   */
  private payOwed(now: number): void {
    this.wal.forgetDurableElsewhere();
    if (!this.wal.syncDue(now, this.closing)) return;
    const plan = this.data.groupCommit ? planTransaction(this.queued, now, true, this.timing) : null;
    if (plan?.synced) this.commitPlan(plan);
    else this.wal.startSync();
  }

  /**
   * One transaction for the plan's batch, plus (group commit) what arrived while waiting for the lock.
   * Commands are claimed only once the lock is held, so a command cancelled meanwhile is never in it.
   */
  private commitPlan(plan: Plan): void {
    const started = Date.now();
    const { batch, synced } = plan;
    this.queued = plan.rest;
    let taken: Command[] | null = null;
    let written: Written;
    try {
      this.beginTransaction();
      this.receiveWaiting();
      if (this.data.groupCommit) this.joinBatch(batch, synced);
      taken = this.claimed(batch);
      this.status.phase(Phase.Write);
      written = this.writeBatch(taken);
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.status.phase(Phase.Idle);
      const failed = taken ?? this.claimed(batch);
      this.post({ type: 'done', results: failed.map((c) => [c.seq, false, `not committed: ${errorText(err)}`]), failure: errorText(err) });
      return;
    }
    this.status.phase(Phase.Idle);
    this.committed(written, started);
  }

  /**
   * BEGIN IMMEDIATE, waiting as long as another connection (an operator's sqlite3) holds the write
   * lock, unless the process is ending (Field.GiveUp, the stop's time limit): then the transaction
   * fails at once, and the thread is out of SQLite's wait before it is stopped. A worker stopped
   * inside that wait aborts the whole process: better-sqlite3 cannot raise SQLite's busy error in
   * a thread that is being stopped.
   */
  private beginTransaction(): void {
    this.status.phase(Phase.Lock);
    for (;;) {
      if (this.status.get(Field.GiveUp) !== 0n) throw new Error('the process is ending: the write lock was not had in time');
      try {
        this.db.exec('BEGIN IMMEDIATE');
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      }
    }
  }

  /**
   * Commands that arrived while waiting for the lock join the transaction (group commit) as the
   * plan allows: a synced one takes the durable ones (and everything, when one must keep its
   * place); an unsynced one takes the unsynced ones up to the first durable one, which waits in
   * its commit window for company (a transaction that carries one starts a sync), and the order of
   * writes is kept.
   */
  private joinBatch(batch: Held[], synced: boolean): void {
    this.sortReceived();
    if (synced) {
      const plan = planTransaction(this.queued, performance.now(), true, this.timing);
      if (plan) {
        batch.push(...plan.batch);
        this.queued = plan.rest;
      }
      return;
    }
    const firstDurable = this.queued.findIndex((c) => isDurable(c.op));
    batch.push(...this.queued.splice(0, firstDurable < 0 ? this.queued.length : firstDurable));
  }

  /** Run the claimed commands inside the open transaction, each in its savepoint. */
  private writeBatch(taken: Command[]): Written {
    const skipping = !this.skippedReserved && taken.some((c) => c.op === 'addToOutbox' || owesSync(c.op));
    if (skipping) this.reservation.skipReserved();
    const results: Result[] = [];
    const owing: Command[] = [];
    let newestOwing = 0;
    for (const c of taken) {
      try {
        const value = this.inSavepoint(c);
        results.push([c.seq, true, value]);
        if (owesSync(c.op)) {
          owing.push(c);
          newestOwing = Math.max(newestOwing, value as number);
        }
      } catch (err) {
        // On SQLITE_FULL or an I/O error SQLite may roll back the whole transaction, not only the
        // savepoint: then what ran before is undone, and the commands after would each commit on
        // their own, outside it, while being reported as failed. The batch ends here, all failed.
        if (!this.db.inTransaction) throw err;
        results.push([c.seq, false, errorText(err)]);
      }
    }
    return { taken, results, owing, skipping, reserving: this.reserveOutboxIds(newestOwing) };
  }

  /**
   * An entry sent to the sorter before its sync: its id is reserved durably, a block at a time
   * and half a block ahead (this commit is then synced at once), so that a power cut can never
   * give it to another entry. Returns the ids reserved up to, or 0.
   */
  private reserveOutboxIds(newestOwing: number): number {
    if (this.data.synchronous !== 'FULL' || newestOwing <= 0 || newestOwing + RESERVED_IDS_AT_A_TIME / 2 <= this.reservedUpTo) return 0;
    const reserving = newestOwing + RESERVED_IDS_AT_A_TIME;
    this.reservation.reserveUpTo(reserving);
    return reserving;
  }

  /** A transaction committed: count it, answer its commands, and owe the syncs its durable writes wait for. */
  private committed(written: Written, started: number): void {
    const { taken, results, owing, skipping, reserving } = written;
    if (skipping) this.skippedReserved = true;
    if (reserving) this.reservedUpTo = reserving;
    // A transaction whose every command failed (a read-only file) committed nothing: not counted.
    const count = results.filter(([, ok]) => ok).length;
    if (count > 0) {
      this.status.set(Field.LastCommitUs, (Date.now() - started) * 1000);
      this.status.add(Field.Commits, 1);
      this.status.add(Field.Writes, count);
    }
    // Without FULL no write is ever synced, and one that is durable or owes a sync is as durable as it gets.
    if (this.data.synchronous !== 'FULL') {
      this.post({ type: 'done', results, failure: null });
      this.wal.settleWithoutSync();
      return;
    }
    const now = performance.now();
    const durables = taken.filter((c) => isDurable(c.op));
    const unsynced = durables.map((c) => c.seq);
    const { earlyAfterMs } = this;
    const earlyAt = (c: Command) => (earlyAfterMs !== null && c.op === 'acceptFromPeer' ? now + earlyAfterMs : Infinity);
    const owingDue = unsynced.length > 0 || reserving ? now : now + this.timing.windowMs;
    const owed: Owed[] = durables.map((c) => ({ seq: c.seq, flag: null, due: now, earlyAt: earlyAt(c) }));
    for (const c of owing) owed.push({ seq: c.seq, flag: this.flagOf(c), due: owingDue, earlyAt: Infinity });
    this.wal.owe(owed);
    this.post({ type: 'done', results, failure: null, unsynced });
    // A durable command's sync, and one for ids reserved, are due now: it starts now, or as the one in flight ends (runDueWork() then starts it).
    if (unsynced.length > 0 || reserving) this.wal.startSync();
  }

  /** A command that cannot run inside a transaction (a checkpoint), run between them. */
  private runOutsideTransaction(c: Command): void {
    if (this.claimed([c]).length === 0) return;
    this.status.phase(Phase.Write);
    try {
      const run = this.outsideCommands[c.op as keyof OutsideCommands] as (...a: unknown[]) => unknown;
      this.post({ type: 'done', results: [[c.seq, true, run(...c.args)]], failure: null });
    } catch (err) {
      this.post({ type: 'done', results: [[c.seq, false, errorText(err)]], failure: null });
    } finally {
      this.status.phase(Phase.Idle);
    }
  }

  /** Closing, everything committed and no sync in flight: the last checkpoints and sync, then the database and the port are closed. */
  private stop(): void {
    for (const c of this.outside.splice(0)) this.runOutsideTransaction(c);
    this.releaseReserved();
    this.wal.syncNow(this.data.synchronous === 'FULL');
    this.wal.close();
    this.db.close();
    this.post({ type: 'closed' });
    this.port.close();
  }

  /**
   * A clean stop, everything synced: the reservation of outbox ids comes down to the last id given,
   * so that the next start numbers on without a gap (after a crash it skips what was reserved).
   */
  private releaseReserved(): void {
    if (!this.skippedReserved) return;
    try {
      this.db.transaction(() => this.reservation.releaseReserved())();
    } catch {
      // A read-only or failing file: the next start skips the reserved ids, which is safe.
    }
  }

  /**
   * Can this connection write? better-sqlite3's `readonly` only repeats how it was opened; a file
   * the process may not write (permissions, an immutable or read-only file system) opens all the
   * same and fails at the first write. So write the schema version over itself, and roll back.
   */
  private canWrite(): boolean {
    try {
      this.db.exec('BEGIN IMMEDIATE');
      this.db.pragma(`user_version = ${this.db.pragma('user_version', { simple: true })}`);
      return true;
    } catch (err) {
      return (err as { code?: string }).code !== 'SQLITE_READONLY';
    } finally {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
    }
  }
}
