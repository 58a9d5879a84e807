// The writer thread (db/writer.ts starts it): the one connection that writes the queue database.
import fs from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { isDurable, isOutsideTransaction, outsideTransactionCommands, owesSync, writeCommands } from './commands';
import { DEFAULT_TIMING, type Held, type Plan, planTransaction, wakeAt } from './commit-plan';
import { type Db, openDatabase } from './connection';
import { RESERVED_IDS_AT_A_TIME, outboxWrites } from './outbox-store';
import { type Command, type FromWriter, type WriterData, Cancel, Field, Phase } from './writer-protocol';
import { THREAD_NAMES, nameThisThread } from '../lib/host/thread-name';

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
const inSavepoint = db.transaction((c: Command) => {
  const run = (commands as Record<string, ((...a: unknown[]) => unknown) | undefined>)[c.op];
  if (!run) throw new Error(`unknown write command ${c.op}`);
  return run(...c.args);
});

/** The outbox ids that may reach the sorter before their rows are synced (migrations/011). */
const reservation = outboxWrites(db);
/** Ids up to this are reserved, durably. */
let reservedUpTo = 0;
/** New outbox rows take ids above every reserved one: done in the first transaction that adds one. */
let skippedReserved = false;

/**
 * A write committed and not yet synced that someone waits on: a durable one (its sync is due at
 * once) or one that owes a sync (db/commands.ts, `owesSync`: due once it has waited the commit
 * window, unless the main thread says it is durable another way first).
 */
interface Owed {
  seq: number;
  flag: Int32Array | null;
  /** When its sync is due (performance.now()). */
  due: number;
  /**
   * A sorter telegram, when it may be answered without its sync (AckUnsyncedAfterMs: its commit
   * plus that long), Infinity for any other write; 0 once so answered.
   */
  earlyAt: number;
}
/** Made durable by the next sync of the WAL. */
let owed: Owed[] = [];
/** AckUnsyncedAfterMs: see Owed.earlyAt, and `stalled`. */
const earlyAfterMs = data.ackUnsyncedAfterMs ?? null;
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
 * place); an unsynced one takes the unsynced ones up to the first durable one, which waits in
 * its commit window for company (a transaction that carries one starts a sync), and the order of
 * writes is kept.
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
 * With Synchronous FULL, no commit syncs inside COMMIT: the connection commits with NORMAL (in WAL
 * mode: its frames written to the WAL, in the page cache, safe from a crash of the process) and
 * the WAL is synced beside this thread (`startSync`), so that a slow or stalled sync holds up the
 * answers that wait for it (a sorter telegram's ACK) and nothing else: a POST's entry, a delivery,
 * the next commit go on meanwhile. A write that must be durable is answered once a sync that began
 * after its commit has ended: in WAL mode a commit is durable once the WAL holds it on the disk.
 */
if (data.synchronous === 'FULL') db.pragma('synchronous = NORMAL');

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
  try {
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
    // An entry sent to the sorter before its sync: its id is reserved durably, a block at a time
    // and half a block ahead (this commit is then synced at once), so that a power cut can never
    // give it to another entry.
    if (data.synchronous === 'FULL' && newestOwing > 0 && newestOwing + RESERVED_IDS_AT_A_TIME / 2 > reservedUpTo) {
      reserving = newestOwing + RESERVED_IDS_AT_A_TIME;
      reservation.reserveUpTo(reserving);
    }
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
    add(Field.Writes, written);
  }
  const now = performance.now();
  // Without FULL no write is ever synced, and one that is durable or owes a sync is as durable as it gets.
  if (data.synchronous !== 'FULL') {
    post({ type: 'done', results, failure: null });
    if (owed.length > 0) settle(owed.splice(0), null);
    return;
  }
  const durables = taken.filter((c) => isDurable(c.op));
  const unsynced = durables.map((c) => c.seq);
  const earlyAt = (c: Command) => (earlyAfterMs !== null && c.op === 'acceptFromPeer' ? now + earlyAfterMs : Infinity);
  for (const c of durables) owed.push({ seq: c.seq, flag: null, due: now, earlyAt: earlyAt(c) });
  for (const c of owing) owed.push({ seq: c.seq, flag: c.cancel ? new Int32Array(c.cancel) : null, due: unsynced.length > 0 || reserving ? now : now + timing.windowMs, earlyAt: Infinity });
  post({ type: 'done', results, failure: null, unsynced });
  // A durable command's sync, and one for ids reserved, are due now: it starts now, or as the one in flight ends (run() then starts it).
  if (unsynced.length > 0 || reserving) startSync();
}

/** These writes are durable now (or the sync failed: `failure`). */
function settle(done: Owed[], failure: string | null): void {
  if (done.length > 0) post({ type: 'synced', seqs: done.map((o) => o.seq), failure });
}

/** The WAL's file, opened for its syncs once it exists (the first write made it; it is never deleted while the writer runs). */
let walFd: number | null = null;
/** The writes the sync in flight makes durable, or null when none is in flight. */
let syncing: Owed[] | null = null;
/** When the sync in flight began (performance.now()). */
let syncStartedAt = 0;

/**
 * The disk stalls: a sync has been in flight for AckUnsyncedAfterMs. Sorter telegrams committed
 * meanwhile are answered at once without their sync, and wait for no commit window: they would
 * only wait for the stall, while the sorter's window fills with telegrams it may not send.
 */
const stalled = (now: number): boolean => earlyAfterMs !== null && syncing !== null && now - syncStartedAt >= earlyAfterMs;

/**
 * Sorter telegrams committed and not yet synced that may be answered without it now
 * (AckUnsyncedAfterMs): their time came, or the disk stalls. Told to the main thread as synced,
 * counted apart; their sync, when it ends, is told again and changes nothing.
 */
function answerEarly(now: number): void {
  if (earlyAfterMs === null) return;
  const isStalled = stalled(now);
  const due: Owed[] = [];
  for (const list of [syncing ?? [], owed]) {
    for (const o of list) {
      if (o.earlyAt === 0 || o.earlyAt === Infinity || (o.earlyAt > now && !isStalled)) continue;
      o.earlyAt = 0;
      due.push(o);
    }
  }
  if (due.length === 0) return;
  add(Field.AnsweredBeforeSync, due.length);
  settle(due, null);
}

/** When answerEarly has something to do without anything new arriving. */
function earlyDue(): number {
  if (earlyAfterMs === null) return Infinity;
  const stallAt = syncing ? syncStartedAt + earlyAfterMs : Infinity;
  let next = stallAt > performance.now() ? stallAt : Infinity;
  for (const list of [syncing ?? [], owed]) for (const o of list) if (o.earlyAt > 0) next = Math.min(next, o.earlyAt);
  return next;
}

/**
 * Sync the WAL beside this thread (in libuv's pool), for every write committed so far: one sync at a
 * time; what commits meanwhile waits for the next, which starts as this one ends (group commit
 * again, at the disk's pace). Counted as a sync in /status.
 */
function startSync(): void {
  if (syncing || owed.length === 0) return;
  syncing = owed;
  owed = [];
  let fd: number;
  try {
    fd = walFd ??= fs.openSync(`${data.file}-wal`, 'r+');
  } catch (err) {
    const failed = syncing;
    syncing = null;
    return settle(failed, reason(err));
  }
  set(Field.SyncSince, Date.now());
  syncStartedAt = performance.now();
  const earlyBefore = Atomics.load(status, Field.AnsweredBeforeSync);
  fs.fdatasync(fd, (err) => {
    set(Field.SyncSince, 0);
    if (!err) add(Field.SyncedCommits, 1);
    const ms = performance.now() - syncStartedAt;
    if (ms >= data.slowSyncMs) post({ type: 'slow-sync', ms: Math.round(ms), answeredEarly: Number(Atomics.load(status, Field.AnsweredBeforeSync) - earlyBefore) });
    const done = syncing ?? [];
    syncing = null;
    settle(done, err ? reason(err) : null);
    run();
  });
}

/**
 * Sync the WAL on this thread, waiting for it: at a stop, once the sync in flight (if any) ended.
 */
function syncWalNow(always = false): void {
  if (owed.length === 0 && !always) return;
  phase(Phase.Sync);
  let failure: string | null = null;
  try {
    fs.fdatasyncSync(walFd ??= fs.openSync(`${data.file}-wal`, 'r+'));
    add(Field.SyncedCommits, 1);
  } catch (err) {
    failure = reason(err);
  }
  phase(Phase.Idle);
  settle(owed.splice(0), failure);
}

/**
 * Writes that owe a sync are due one once the oldest has waited the commit window (at once when
 * closing), unless the main thread said they are durable another way (the sorter acknowledged
 * the entry). Then the durable writes waiting in their window go now, synced, if there are any
 * (their sync takes the owed ones along); else the WAL is synced for them alone.
 */
function payOwed(now: number): void {
  owed = owed.filter((o) => !o.flag || Atomics.load(o.flag, 0) !== Cancel.DurableElsewhere);
  if (owed.length === 0 || syncing || (!closing && !owed.some((o) => o.due <= now))) return;
  const plan = data.groupCommit ? planTransaction(queued, now, true, timing) : null;
  if (plan?.synced) transaction(plan);
  else startSync();
}

/** When the oldest owed write is due its sync, if no sync is in flight (one in flight calls run() as it ends). */
const owedDue = (): number => (syncing || owed.length === 0 ? Infinity : Math.min(...owed.map((o) => o.due)));

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
/** While the disk stalls, a sorter telegram's write waits for no window (`stalled`). */
const stallTiming = { ...timing, windowMs: 0 };

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
    // A checkpoint syncs on this thread: not while a sync is in flight (the disk may be stalled:
    // it would hold up every commit behind it); it runs as that sync ends.
    if (!syncing) for (const c of outside.splice(0)) runOutside(c);
    if (owed.length > 0) payOwed(performance.now());
    answerEarly(performance.now());
    if (queued.length === 0) break;
    if (!data.groupCommit) {
      for (const c of queued.splice(0)) transaction({ batch: [c], rest: queued, synced: isDurable(c.op) });
    } else {
      const now = performance.now();
      const plan = planTransaction(queued, closing ? Infinity : now, false, stalled(now) ? stallTiming : timing);
      if (!plan) break;
      transaction(plan);
    }
    drainPort();
  }
  if (closing && queued.length === 0) {
    if (syncing) return; // it calls run() as it ends
    for (const c of outside.splice(0)) runOutside(c);
    releaseReserved();
    syncWalNow(data.synchronous === 'FULL');
    if (walFd !== null) fs.closeSync(walFd);
    db.close();
    post({ type: 'closed' });
    port.close();
    return;
  }
  const next = Math.min(queued.length > 0 ? wakeAt(queued, stalled(performance.now()) ? stallTiming : timing) : Infinity, owedDue(), earlyDue());
  if (next < Infinity) wake = setTimeout(run, Math.max(0, next - performance.now()));
}

/**
 * A clean stop, everything synced: the reservation of outbox ids comes down to the last id given,
 * so that the next start numbers on without a gap (after a crash it skips what was reserved).
 */
function releaseReserved(): void {
  if (!skippedReserved) return;
  try {
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
