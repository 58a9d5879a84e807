// The stores as the service uses them: reads on the main thread's connection, writes through the
// writer thread.
import { type AlarmReads, type AlarmWrites, alarmReads } from './alarm-store';
import type { Db } from './connection';
import { type DestinationBoardReads, destinationBoardReads } from './destination-board-store';
import { type DeadLetterReads, type DeadLetterWrites, deadLetterReads } from './dead-letter-store';
import { type HistoryReads, type HistoryWrites, historyReads } from './history-store';
import { type LinkReads, type LinkWrites, linkReads } from './link-store';
import { type OutboxReads, type OutboxWrites, outboxReads } from './outbox-store';
import { type QueueReads, queueReads } from './queue-reads';
import type { QueueWrites } from './queue-writes';
import { type RunOptions, type Unsynced, WriteCancelled, WriteFailed, type Writer } from './writer';

/** A store's synchronous writes as the service calls them: promises that resolve once committed. */
type Committed<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never };

/** A write the service may be refused (storage stalled or failing): the reason, and nothing was written. */
export type Refusable<T> = { written: true; value: T } | { written: false; reason: string };

/** How an outbox entry is added: `beforeSync`, committed without a sync and reported durable later (db/commands.ts, `owesSync`). */
export type AddOptions = RunOptions & { beforeSync?: boolean };

/** An outbox entry added (its id), and, added before its sync, when it is durable; or why nothing was written. */
export type Added = { written: true; value: number; unsynced?: Omit<Unsynced<number>, 'value'> } | { written: false; reason: string };

/**
 * The stores as the service uses them: reads run on the main thread's read-only connection,
 * writes are commands to the writer thread (db/writer.ts) that resolve once committed.
 */
export interface ServiceStores {
  queues: QueueReads & Committed<QueueWrites>;
  outbox: OutboxReads &
    Committed<Pick<OutboxWrites, 'removeFromOutbox'>> & {
      /** Add a message for the sorter, unless the storage cannot start the write within `options.cancelAfterMs`. */
      addToOutbox(...args: [...Parameters<OutboxWrites['addToOutbox']>, AddOptions?]): Promise<Added>;
    };
  links: LinkReads & Committed<LinkWrites>;
  history: HistoryReads & Committed<HistoryWrites>;
  deadLetters: DeadLetterReads & Committed<DeadLetterWrites>;
  alarms: AlarmReads & Committed<AlarmWrites>;
  /** The destinations board: written with the SCANs' and the settings' own writes, read here. */
  board: DestinationBoardReads;
}

/** Assemble the service's stores from its read connection and its writer. */
export function serviceStores(reader: Db, writer: Writer): ServiceStores {
  return {
    queues: {
      ...queueReads(reader),
      enqueue: (messages, receivedAt, ids) => writer.run('enqueue', [messages, receivedAt, ids]),
      deliver: (stored, delivery) => writer.run('deliver', [stored, delivery]),
      clearQueues: () => writer.run('clearQueues', []),
      supersedeRequests: (trackId, newerId, at) => writer.run('supersedeRequests', [trackId, newerId, at]),
      expireRequests: (older, at) => writer.run('expireRequests', [older, at]),
    },
    outbox: {
      ...outboxReads(reader),
      addToOutbox: async (message, clientAddress, createdAt, options = {}) => {
        try {
          if (!options.beforeSync)
            return { written: true, value: await writer.run('addToOutbox', [message, clientAddress, createdAt], options) };
          const { value, ...unsynced } = await writer.runUnsynced('addToOutboxUnsynced', [message, clientAddress, createdAt], options);
          return { written: true, value, unsynced };
        } catch (err) {
          if (err instanceof WriteCancelled || err instanceof WriteFailed) return { written: false, reason: err.message };
          throw err;
        }
      },
      removeFromOutbox: (id) => writer.run('removeFromOutbox', [id]),
    },
    links: {
      ...linkReads(reader),
      ensurePeerSession: (peer, at) => writer.run('ensurePeerSession', [peer, at]),
      setPeerSession: (peer, epoch, lastSeqIn, at) => writer.run('setPeerSession', [peer, epoch, lastSeqIn, at]),
      acceptFromPeer: (peer, seq, after, message, at, dropSuperseded, id) =>
        writer.run('acceptFromPeer', [peer, seq, after, message, at, dropSuperseded, id]),
      dropFromOutbox: (entry, reason, at) => writer.run('dropFromOutbox', [entry, reason, at]),
    },
    history: {
      ...historyReads(reader),
      purgeHistory: (cutoff, limit) => writer.run('purgeHistory', [cutoff, limit]),
      checkpoint: (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]),
    },
    deadLetters: {
      ...deadLetterReads(reader),
      deadLetter: (stored, info) => writer.run('deadLetter', [stored, info]),
      requeueDeadLetters: (ids) => writer.run('requeueDeadLetters', [ids]),
    },
    alarms: {
      ...alarmReads(reader),
      raiseAlarm: (alarm) => writer.run('raiseAlarm', [alarm]),
      clearAlarm: (id, at) => writer.run('clearAlarm', [id, at]),
      acknowledgeAlarm: (id, by, at) => writer.run('acknowledgeAlarm', [id, by, at]),
      purgeAlarmsBefore: (cutoff, limit) => writer.run('purgeAlarms', [cutoff, limit]),
    },
    board: destinationBoardReads(reader),
  };
}
