// Reading the queue tables: the head past the claimed messages, depths and counts in one
// snapshot, the oldest message. The service reads on its own read-only connection, on the
// main thread, while the writer thread commits.
import type { Db } from './connection';
import type { QueueMessages, QueueName } from '../model/messages';
import { type DestinationRow, type SortationRow, type StoredMessage, destinationMessage, lastIdOf, sortationMessage } from './queue-rows';
import { type TableCount, tableCount } from './table-count';

/** Reading the durable queues (the service's read-only connection, on the main thread). */
export interface QueueReads {
  /** The oldest message of a queue whose id is not in `skip` (claims in flight). */
  head<Q extends QueueName>(queue: Q, skip: Iterable<number>): StoredMessage<Q> | undefined;
  /** Messages in each queue, those being handed out included. */
  depth(queue: QueueName): number;
  /**
   * The messages of a queue, split by `claimed` (the ids being handed out), read in one snapshot:
   * a claim whose removal has just been committed is in neither count, not subtracted twice.
   */
  counts(queue: QueueName, claimed: Iterable<number>): { waiting: number; handedOut: number };
  /** Counting a queue a slice at a time, for the figures of a long queue (lib/queue/live-counts.ts). */
  tally(queue: QueueName): TableCount;
  /** The oldest message of a queue, its id and received_at, or null if it is empty. */
  oldest(queue: QueueName): { id: number; receivedAt: string } | null;
  /** The highest id the queue's table has given, those of rows that have left it included (migrations/010). */
  lastId(queue: QueueName): number;
}

/** A row read, with the message made of it (undefined: no row). */
const withMessage = <R, M>(row: R | undefined, toMessage: (r: R) => M) => (row ? { row, message: toMessage(row) } : undefined);

/** The queue reads on an open, migrated database; statements are prepared once here. */
export function queueReads(db: Db): QueueReads {
  // Claims in flight are few (one per waiting client at most): pass them as a JSON array.
  const heads = {
    sortation: db.prepare<[string], SortationRow>(`SELECT * FROM sortation_queue
      WHERE id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT 1`),
    destination: db.prepare<[string], DestinationRow>(`SELECT * FROM destination_queue
      WHERE id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT 1`),
  };
  // Counted whole, in one statement: one snapshot (the writer may commit a removal between two).
  const tallies = { sortation: tableCount(db, 'sortation_queue'), destination: tableCount(db, 'destination_queue') };
  const oldest = {
    sortation: db.prepare<[], { id: number; receivedAt: string }>(
      'SELECT id, received_at AS receivedAt FROM sortation_queue ORDER BY id LIMIT 1',
    ),
    destination: db.prepare<[], { id: number; receivedAt: string }>(
      'SELECT id, received_at AS receivedAt FROM destination_queue ORDER BY id LIMIT 1',
    ),
  };
  const lastIds = {
    sortation: db.prepare<[], number | null>(`SELECT ${lastIdOf('sortation_queue')}`).pluck(),
    destination: db.prepare<[], number | null>(`SELECT ${lastIdOf('destination_queue')}`).pluck(),
  };
  return {
    head<Q extends QueueName>(queue: Q, skip: Iterable<number>): StoredMessage<Q> | undefined {
      const skipped = JSON.stringify([...skip]);
      const found =
        queue === 'sortation'
          ? withMessage(heads.sortation.get(skipped), sortationMessage)
          : withMessage(heads.destination.get(skipped), destinationMessage);
      if (!found) return undefined;
      return { id: found.row.id, queue, message: found.message as QueueMessages[Q], receivedAt: found.row.received_at };
    },
    depth: (queue) => tallies[queue].whole('[]').rows,
    counts(queue, claimed) {
      const { rows, among } = tallies[queue].whole(JSON.stringify([...claimed]));
      return { waiting: rows - among, handedOut: among };
    },
    tally: (queue) => tallies[queue],
    oldest: (queue) => oldest[queue].get() ?? null,
    lastId: (queue) => lastIds[queue].get() ?? 0,
  };
}
