// The writer's commands: every write the service makes, by name, run by the writer thread.
import { alarmWrites } from './alarm-store';
import type { Db } from './connection';
import { deadLetterWrites } from './dead-letter-store';
import { historyWrites } from './history-store';
import { linkWrites } from './link-store';
import { outboxWrites } from './outbox-store';
import { queueWrites } from './queue-writes';

/**
 * Every write the service makes, by name: what the writer thread (db/writer.ts) runs. A command
 * is data (its name and its arguments), so it crosses the thread boundary; its SQL stays in the
 * store that owns the table. Each carries one name from its caller (db/service-stores.ts) through
 * here to the store function that runs it.
 */
export function writeCommands(db: Db) {
  const queue = queueWrites(db);
  const outbox = outboxWrites(db);
  const link = linkWrites(db, queue);
  const history = historyWrites(db);
  const dead = deadLetterWrites(db);
  const alarms = alarmWrites(db);
  return {
    /** Sorter messages into their queues (replay seeding, tests). */
    enqueue: queue.enqueue,
    /** A message read by a WCS client: out of its queue, into the history. */
    deliver: queue.deliver,
    /** Empty both queues (test mode, before seeding). */
    clearQueues: queue.clearQueues,
    /** An assignment or destination setting for the sorter (POST), answered once synced. */
    addToOutbox: outbox.addToOutbox,
    /**
     * The same write, committed without a sync and sent at once: answered once the sorter acknowledged it or a sync came
     * (`owesSync`). A name of its own, not an argument: the writer plans a transaction by its commands' names alone
     * (`durable`, `owesSync`, db/commit-plan.ts), and this mode is planned apart (ServiceStores' `addToOutbox` with `beforeSync`).
     */
    addToOutboxUnsynced: outbox.addToOutbox,
    /** An outbox entry the sorter acknowledged. */
    removeFromOutbox: outbox.removeFromOutbox,
    ensurePeerSession: link.ensurePeerSession,
    setPeerSession: link.setPeerSession,
    /** A message from the sorter with its sequence number. */
    acceptFromPeer: link.acceptFromPeer,
    /** An outbox entry the sorter cannot use: to outbox_dropped. */
    dropFromOutbox: link.dropFromOutbox,
    purgeHistory: history.purgeHistory,
    /** Older REQUESTs of an item that went round again: out of the queue, into the history. */
    supersedeRequests: queue.supersedeRequests,
    /** REQUESTs older than MaxRequestAgeSeconds: out of the queue, into the history. */
    expireRequests: queue.expireRequests,
    /** A message handed out MaxDeliveries times without proof of the read: out of its queue, into dead_letters. */
    deadLetter: dead.deadLetter,
    /** Dead letters back to their queues (an operator's request). */
    requeueDeadLetters: dead.requeueDeadLetters,
    /** An alarm raised, cleared, acknowledged, purged (lib/ops/alarms.ts). */
    raiseAlarm: alarms.raiseAlarm,
    clearAlarm: alarms.clearAlarm,
    acknowledgeAlarm: alarms.acknowledgeAlarm,
    purgeAlarms: alarms.purgeAlarmsBefore,
  };
}

/** Writes that cannot run inside a transaction: the writer runs them between transactions. */
export function outsideTransactionCommands(db: Db) {
  const history = historyWrites(db);
  return { checkpoint: history.checkpoint };
}

type Transactional = ReturnType<typeof writeCommands>;
type Outside = ReturnType<typeof outsideTransactionCommands>;
type All = Transactional & Outside;

/**
 * Which writes must reach the disk before the service answers for them (docs/reliability.md,
 * "What a power cut loses"). A transaction holding any of these commits with the configured
 * `Synchronous` (FULL: a disk sync); one holding none commits with NORMAL, which in WAL mode
 * syncs nothing and is made durable by the next synced commit (or checkpoint): a power cut
 * before that loses it, a crash of the process does not. What the others lose is a repeat the
 * service already handles after a kill -9 today: a message handed out again (marked), an
 * assignment sent again (the sorter recognises its number), a purge or an expiry done again.
 */
export const durable: Record<keyof Transactional, boolean> = {
  // The sorter's telegram (REQUEST, VERIFY, SCAN) is acknowledged once committed: the PLC never sends it again.
  acceptFromPeer: true,
  // A WCS POST is answered 200 once committed: the WCS never posts it again.
  addToOutbox: true,
  // A WCS POST whose entry goes to the sorter before its sync: see `owesSync`.
  addToOutboxUnsynced: false,
  // Replay seeding and the test mode's clear: rare, and a start relies on them being there.
  enqueue: true,
  clearQueues: true,
  // Our epoch and the peer's session: once per connection; losing them would renumber the link.
  ensurePeerSession: true,
  setPeerSession: true,
  // An operator is told the dead letters are back in their queues.
  requeueDeadLetters: true,
  // Lost: the message stays in its queue and is handed out again after the restart (attempts are counted in memory).
  deliver: false,
  // Lost: the message is back in its queue and dead-lettered again after its next unproven deliveries.
  deadLetter: false,
  // Lost: the assignment is sent again under the same number, and the sorter acknowledges the repeat.
  removeFromOutbox: false,
  // Lost: the entry is found past its time to live again and dropped again.
  dropFromOutbox: false,
  // Housekeeping, done again at its next run.
  purgeHistory: false,
  supersedeRequests: false,
  expireRequests: false,
  // The alarm journal is the operators' record of what went wrong, written a few times a day: a
  // sync each costs nothing, and a power cut (what the journal may have to explain) keeps it.
  raiseAlarm: true,
  clearAlarm: true,
  acknowledgeAlarm: true,
  // Housekeeping, done again at its next run.
  purgeAlarms: false,
};

/**
 * A write committed at once without a sync, and reported twice: committed (so the main thread can
 * act on it: send the entry to the sorter), then durable, by the next synced commit or by a sync
 * of the WAL the writer makes for it within the commit window (db/wal-sync.ts). Its caller
 * may declare it durable another way before that (the sorter acknowledged the entry): then the
 * writer owes it no sync.
 */
export const owesSync = (op: WriteOp): boolean => op === 'addToOutboxUnsynced';

/** True when a transaction holding `op` must be synced before its commit is reported. */
export const isDurable = (op: WriteOp): boolean => op in durable && durable[op as keyof Transactional];

/** The name of a write command. */
export type WriteOp = keyof All;
/** The arguments of a write command. */
export type WriteArgs<Op extends WriteOp> = Parameters<All[Op]>;
/** What a write command returns once committed. */
export type WriteResult<Op extends WriteOp> = ReturnType<All[Op]>;
/** True for the commands the writer runs between transactions. */
export const isOutsideTransaction = (op: WriteOp): op is keyof Outside => op === 'checkpoint';
