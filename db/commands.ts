// The writer's commands: every write the service makes, by name, run by the writer thread.
import type { Db } from './connection';
import { deadLetterWrites } from './dead-letter-store';
import { historyWrites } from './history-store';
import { linkWrites } from './link-store';
import { outboxWrites } from './outbox-store';
import { queueWrites } from './queue-writes';

/**
 * Every write the service makes, by name: what the writer thread (db/writer.ts) runs. A command
 * is data (its name and its arguments), so it crosses the thread boundary; its SQL stays in the
 * store that owns the table.
 */
export function writeCommands(db: Db) {
  const queue = queueWrites(db);
  const outbox = outboxWrites(db);
  const link = linkWrites(db, queue);
  const history = historyWrites(db);
  const dead = deadLetterWrites(db);
  return {
    /** Sorter messages into their queues (replay seeding, tests). */
    enqueue: queue.enqueue,
    /** A message read by a WCS client: out of its queue, into the history. */
    deliver: queue.remove,
    /** Empty both queues (test mode, before seeding). */
    clearQueues: queue.clear,
    /** An assignment or destination setting for the sorter (POST). */
    addToOutbox: outbox.add,
    /** An outbox entry the sorter acknowledged. */
    removeFromOutbox: outbox.remove,
    ensurePeerSession: link.ensureSession,
    setPeerSession: link.setPeerSession,
    /** A message from the sorter with its sequence number. */
    acceptFromPeer: link.accept,
    /** An outbox entry the sorter cannot use: to outbox_dropped. */
    dropFromOutbox: link.drop,
    purgeHistory: history.purgeDeliveredBefore,
    /** Older REQUESTs of an item that went round again: out of the queue, into the history. */
    supersedeRequests: queue.supersede,
    /** REQUESTs older than MaxRequestAgeSeconds: out of the queue, into the history. */
    expireRequests: queue.expireRequests,
    /** A message handed out MaxDeliveries times without proof of the read: out of its queue, into dead_letters. */
    deadLetter: dead.deadLetter,
    /** Dead letters back to their queues (an operator's request). */
    requeueDeadLetters: dead.requeueDeadLetters,
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

/** The name of a write command. */
export type WriteOp = keyof All;
/** The arguments of a write command. */
export type WriteArgs<Op extends WriteOp> = Parameters<All[Op]>;
/** What a write command returns once committed. */
export type WriteResult<Op extends WriteOp> = ReturnType<All[Op]>;
/** True for the commands the writer runs between transactions. */
export const isOutsideTransaction = (op: WriteOp): op is keyof Outside => op === 'checkpoint';
