// The writer thread (db/writer.ts starts it): the one connection that writes the queue database.
import fs from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { isDurable, isOutsideTransaction, outsideTransactionCommands, owesSync, writeCommands } from './commands';
import { DEFAULT_TIMING, type Held, type Plan, planTransaction, wakeAt } from './commit-plan';
import { type Db, openDatabase } from './connection';
import { RESERVED_IDS_AT_A_TIME, outboxWrites } from './outbox-store';
import { type Command, type FromWriter, type WriterData, Cancel, Field, Phase } from './writer-protocol';
import { THREAD_NAMES, nameThisThread } from './thread-name';

// It keeps the process's priority (lib/main.ts lowers only the threads there before it starts): the sorter's ACKs wait for its commits.
nameThisThread(THREAD_NAMES.writer);

const port = parentPort!;
const data = workerData as WriterData;
/** The commit window and the hold (config.json CommitWindowMs, UnsyncedHoldMs). */
const timing = data.timing ?? DEFAULT_TIMING;
const status = new BigInt64Array(data.status);

const set = (field: Field, value: number) => Atomics.store(status, field, BigInt(Math.round(value)));
const add = (field: Field, n: number) => Atomics.add(status, field, BigInt(n));
const phase = (p: Phase) => {
  set(Field.PhaseSince, Date.now());
  set(Field.Phase, p);
};
const post = (message: FromWriter) => port.postMessage(message);
const reason = (err: unknown) => {
  const e = err as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message}` : String(e.message ?? err);
};

let db: Db;
try {
  db = openDatabase(data.file, { synchronous: data.synchronous, migrationsDir: data.migrationsDir });
} catch (err) {
  post({ type: 'failed-to-open', error: reason(err) });
  process.exit(1);
}
// Checkpoints run on their own thread (db/checkpointer.ts), never inside a commit; it also keeps
// the WAL from growing into the disk's free space. (Not journal_size_limit: at 1,000 items/s the
// WAL passes any small limit between restarts, and the file would be cut back at every restart.)
db.pragma('wal_autocheckpoint = 0');
const commands = writeCommands(db);
const outsideCommands = outsideTransactionCommands(db);
// Each command in a savepoint of the batch's transaction: a failing one is undone alone.
const inSavepoint = db.transaction((c: Command) => (commands as Record<string, (...a: unknown[]) => unknown>)[c.op](...c.args));

/** The outbox ids that may reach the sorter before their rows are synced (migrations/011). */
const reservation = outboxWrites(db);
/** Ids up to this are reserved, durably. */
let reservedUpTo = 0;
/** New outbox rows take ids above every reserved one: done in the first transaction that adds one. */
let skippedReserved = false;

/** A write committed without the sync it owes (db/commands.ts, `owesSync`), and since when (performance.now()). */
interface Owed {
  seq: number;
  flag: Int32Array | null;
  at: number;
}
/** Made durable by the next synced commit, or by a sync of the WAL once the oldest has waited the commit window. */
let owed: Owed[] = [];

/** Arrived from the main thread, not yet looked at. */
const pending: Held[] = [];
/** Transactional commands in the order given, waiting for their transaction (db/commit-plan.ts). */
let queued: Held[] = [];
/** Checkpoints, run between transactions. */
const outside: Held[] = [];
let closing = false;

function take(message: unknown): void {
  if (Array.isArray(message)) {
    const at = performance.now();
    for (const c of message as Held[]) {
      c.at = at;
      pending.push(c);
    }
  } else if ((message as { type?: string }).type === 'close') closing = true;
}

/** Everything that arrived while this thread was busy (or blocked), without waiting for the event loop. */
function drainPort(): void {
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) take(m.message);
}

/** A command the main thread gave up on (it answered 503) is skipped: nothing half-written. */
function claim(c: Command): boolean {
  return !c.cancel || Atomics.compareExchange(new Int32Array(c.cancel), 0, Cancel.Queued, Cancel.Taken) === Cancel.Queued;
}

/** BEGIN IMMEDIATE, waiting as long as another connection (an operator's sqlite3) holds the write lock. */
function begin(): void {
  phase(Phase.Lock);
  for (;;) {
    try {
      db.exec('BEGIN IMMEDIATE');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    }
  }
}

/**
 * Commands that arrived while waiting for the lock join the transaction (group commit) as the
 * plan allows: a synced one takes the durable ones (and everything, when one must keep its
 * place); an unsynced one takes the unsynced ones up to the first durable one, since the safety
 * level cannot change inside a transaction and the order of writes is kept.
 */
function join(batch: Held[], synced: boolean): void {
  for (const c of pending.splice(0)) (isOutsideTransaction(c.op) ? outside : queued).push(c);
  if (synced) {
    const plan = planTransaction(queued, performance.now(), true, timing);
    if (plan) {
      batch.push(...plan.batch);
      queued = plan.rest;
    }
    return;
  }
  const firstDurable = queued.findIndex((c) => isDurable(c.op));
  batch.push(...queued.splice(0, firstDurable < 0 ? queued.length : firstDurable));
}

/**
 * The safety level of the connection, set between transactions: a transaction with a durable
 * command (db/commands.ts, `durable`) commits with the configured Synchronous, any other with
 * NORMAL (no sync: the next synced commit makes it durable).
 */
let level: 'FULL' | 'NORMAL' = data.synchronous;
function setLevel(synced: boolean): void {
  const want = synced ? data.synchronous : 'NORMAL';
  if (want === level) return;
  db.pragma(`synchronous = ${want}`);
  level = want;
}

/**
 * One transaction for the plan's batch, plus (group commit) what arrived while waiting for the lock.
 * Commands are claimed only once the lock is held, so a command cancelled meanwhile is never in it.
 */
function transaction(plan: Plan): void {
  const started = Date.now();
  const { batch, synced } = plan;
  queued = plan.rest;
  let taken: Command[] | null = null;
  const results: Array<[number, true, unknown] | [number, false, string]> = [];
  const owing: Command[] = [];
  let reserving = 0;
  let skipping = false;
  const syncs = synced && data.synchronous === 'FULL';
  try {
    setLevel(synced);
    begin();
    drainPort();
    if (data.groupCommit) join(batch, synced);
    taken = batch.filter(claim);
    phase(Phase.Write);
    skipping = !skippedReserved && taken.some((c) => c.op === 'addToOutbox' || owesSync(c.op));
    if (skipping) reservation.skipReserved();
    let newestOwing = 0;
    for (const c of taken) {
      try {
        const value = inSavepoint(c);
        results.push([c.seq, true, value]);
        if (owesSync(c.op)) {
          owing.push(c);
          newestOwing = Math.max(newestOwing, value as number);
        }
      } catch (err) {
        // On SQLITE_FULL or an I/O error SQLite may roll back the whole transaction, not only the
        // savepoint: then what ran before is undone, and the commands after would each commit on
        // their own, outside it, while being reported as failed. The batch ends here, all failed.
        if (!db.inTransaction) throw err;
        results.push([c.seq, false, reason(err)]);
      }
    }
    // An entry sent to the sorter before its sync: its id is reserved durably first, a block at a
    // time (this commit is then synced), so that a power cut can never give it to another entry.
    if (!syncs && data.synchronous === 'FULL' && newestOwing > reservedUpTo) {
      reserving = newestOwing + RESERVED_IDS_AT_A_TIME;
      reservation.reserveUpTo(reserving);
    }
    phase(Phase.Sync);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    phase(Phase.Idle);
    const failed = taken ?? batch.filter(claim);
    post({ type: 'done', results: failed.map((c) => [c.seq, false, `not committed: ${reason(err)}`]), failure: reason(err) });
    return;
  }
  phase(Phase.Idle);
  if (skipping) skippedReserved = true;
  if (reserving) reservedUpTo = reserving;
  // A transaction whose every command failed (a read-only file) committed nothing: not counted.
  const written = results.filter(([, ok]) => ok).length;
  if (written > 0) {
    set(Field.LastCommitUs, (Date.now() - started) * 1000);
    add(Field.Commits, 1);
    if (syncs) add(Field.SyncedCommits, 1);
    add(Field.Writes, written);
  }
  const now = performance.now();
  for (const c of owing) owed.push({ seq: c.seq, flag: c.cancel ? new Int32Array(c.cancel) : null, at: now });
  post({ type: 'done', results, failure: null });
  // Synced now; or without FULL, where no write is ever synced and one that owes a sync is as durable as it gets.
  if (syncs || data.synchronous !== 'FULL') settleOwed(null);
  else if (reserving) syncWal();
}

/** What was owed a sync is durable now (or the sync failed: `failure`). */
function settleOwed(failure: string | null): void {
  if (owed.length === 0) return;
  post({ type: 'synced', seqs: owed.map((o) => o.seq), failure });
  owed = [];
}

/**
 * Sync the WAL, as a synced commit would: every transaction committed before is durable after
 * it (in WAL mode a commit is durable once the WAL holds it on the disk).
 */
function syncWal(): void {
  phase(Phase.Sync);
  let failure: string | null = null;
  try {
    const fd = fs.openSync(`${data.file}-wal`, 'r+');
    try {
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    add(Field.SyncedCommits, 1);
  } catch (err) {
    failure = reason(err);
  }
  phase(Phase.Idle);
  settleOwed(failure);
}

/**
 * Writes that owe a sync are due one once the oldest has waited the commit window (at once when
 * closing), unless the main thread said they are durable another way (the sorter acknowledged
 * the entry). Then the durable writes waiting in their window go now, synced, if there are any;
 * else the WAL is synced alone.
 */
function payOwed(now: number): void {
  owed = owed.filter((o) => !o.flag || Atomics.load(o.flag, 0) !== Cancel.DurableElsewhere);
  if (owed.length === 0 || (!closing && now - owed[0].at < timing.windowMs)) return;
  const plan = data.groupCommit ? planTransaction(queued, now, true, timing) : null;
  if (plan?.synced) transaction(plan);
  else syncWal();
}

function runOutside(c: Command): void {
  if (!claim(c)) return;
  phase(Phase.Write);
  try {
    post({ type: 'done', results: [[c.seq, true, (outsideCommands[c.op as keyof typeof outsideCommands] as (...a: unknown[]) => unknown)(...c.args)]], failure: null });
  } catch (err) {
    post({ type: 'done', results: [[c.seq, false, reason(err)]], failure: null });
  } finally {
    phase(Phase.Idle);
  }
}

let wake: NodeJS.Timeout | null = null;

/**
 * Pipelined group commit: every command that arrived while the previous transaction was being
 * committed goes into the next one, which starts as soon as that one is done, as far as
 * db/commit-plan.ts lets it: a durable write waits a few milliseconds for others to share its
 * sync, a write that needs none is held back to be committed with others.
 */
function run(): void {
  if (wake) clearTimeout(wake);
  wake = null;
  drainPort();
  for (;;) {
    for (const c of pending.splice(0)) (isOutsideTransaction(c.op) ? outside : queued).push(c);
    for (const c of outside.splice(0)) runOutside(c);
    if (owed.length > 0) payOwed(performance.now());
    if (queued.length === 0) break;
    if (!data.groupCommit) {
      for (const c of queued.splice(0)) transaction({ batch: [c], rest: queued, synced: isDurable(c.op) });
    } else {
      const plan = planTransaction(queued, closing ? Infinity : performance.now(), false, timing);
      if (!plan) break;
      transaction(plan);
    }
    drainPort();
  }
  if (closing && queued.length === 0) {
    if (owed.length > 0) payOwed(Infinity);
    releaseReserved();
    db.close();
    post({ type: 'closed' });
    port.close();
    return;
  }
  const next = Math.min(queued.length > 0 ? wakeAt(queued, timing) : Infinity, owed.length > 0 ? owed[0].at + timing.windowMs : Infinity);
  if (next < Infinity) wake = setTimeout(run, Math.max(0, next - performance.now()));
}

/**
 * A clean stop, everything synced: the reservation of outbox ids comes down to the last id given,
 * so that the next start numbers on without a gap (after a crash it skips what was reserved).
 */
function releaseReserved(): void {
  if (!skippedReserved) return;
  try {
    setLevel(true);
    db.transaction(() => reservation.releaseReserved())();
  } catch {
    // A read-only or failing file: the next start skips the reserved ids, which is safe.
  }
}

/**
 * Can this connection write? better-sqlite3's `readonly` only repeats how it was opened; a file
 * the process may not write (permissions, an immutable or read-only file system) opens all the
 * same and fails at the first write. So write the schema version over itself, and roll back.
 */
function canWrite(): boolean {
  try {
    db.exec('BEGIN IMMEDIATE');
    db.pragma(`user_version = ${db.pragma('user_version', { simple: true })}`);
    return true;
  } catch (err) {
    return (err as { code?: string }).code !== 'SQLITE_READONLY';
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
  }
}

// At once: what else is queued is taken from the port by run() itself.
port.on('message', (message) => {
  take(message);
  run();
});
phase(Phase.Idle);
post({ type: 'ready', readOnly: !canWrite() });
