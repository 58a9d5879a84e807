// Reading the queue tables: the head past the claimed messages, depths and counts in one
// snapshot, the oldest message's age. The service reads on its own read-only connection, on the
// main thread, while the writer thread commits.
import type { Db } from './connection';
import type { QueueMessages, QueueName } from '../model/messages';
import { type DestinationRow, type SortationRow, type StoredMessage, destinationMessage, lastIdOf, sortationMessage } from './queue-rows';

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
  /** received_at of the oldest message in a queue, or null if it is empty. */
  oldestReceivedAt(queue: QueueName): string | null;
  /** The highest id the queue's table has given, those of rows that have left it included (migrations/010). */
  lastId(queue: QueueName): number;
}

/** The queue reads on an open, migrated database; statements are prepared once here. */
export function queueReads(db: Db): QueueReads {
  // Claims in flight are few (one per waiting client at most): pass them as a JSON array.
  const heads = {
    sortation: db.prepare(`SELECT * FROM sortation_queue
      WHERE id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT 1`),
    destination: db.prepare(`SELECT * FROM destination_queue
      WHERE id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT 1`),
  };
  const depths = {
    sortation: db.prepare('SELECT count(*) AS n FROM sortation_queue').pluck(),
    destination: db.prepare('SELECT count(*) AS n FROM destination_queue').pluck(),
  };
  // One statement, one snapshot: the writer may commit a removal between two.
  const counts = {
    sortation: db.prepare(`SELECT (SELECT count(*) FROM sortation_queue) AS total,
      (SELECT count(*) FROM sortation_queue WHERE id IN (SELECT value FROM json_each(?))) AS handed`),
    destination: db.prepare(`SELECT (SELECT count(*) FROM destination_queue) AS total,
      (SELECT count(*) FROM destination_queue WHERE id IN (SELECT value FROM json_each(?))) AS handed`),
  };
  const oldest = {
    sortation: db.prepare('SELECT received_at FROM sortation_queue ORDER BY id LIMIT 1').pluck(),
    destination: db.prepare('SELECT received_at FROM destination_queue ORDER BY id LIMIT 1').pluck(),
  };
  const lastIds = {
    sortation: db.prepare(`SELECT ${lastIdOf('sortation_queue')}`).pluck(),
    destination: db.prepare(`SELECT ${lastIdOf('destination_queue')}`).pluck(),
  };
  return {
    head<Q extends QueueName>(queue: Q, skip: Iterable<number>): StoredMessage<Q> | undefined {
      const row = heads[queue].get(JSON.stringify([...skip])) as SortationRow | DestinationRow | undefined;
      if (!row) return undefined;
      const message = queue === 'sortation' ? sortationMessage(row as SortationRow) : destinationMessage(row as DestinationRow);
      return { id: row.id, queue, message: message as QueueMessages[Q], receivedAt: row.received_at };
    },
    depth: (queue) => depths[queue].get() as number,
    counts(queue, claimed) {
      const { total, handed } = counts[queue].get(JSON.stringify([...claimed])) as { total: number; handed: number };
      return { waiting: total - handed, handedOut: handed };
    },
    oldestReceivedAt: (queue) => (oldest[queue].get() as string | undefined) ?? null,
    lastId: (queue) => (lastIds[queue].get() as number | null) ?? 0,
  };
}
