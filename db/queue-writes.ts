// Writing the queue tables: enqueue, removal into delivered_history (a delivery, or a REQUEST
// superseded or expired), and the test mode's clear. Run by the writer thread (db/writer.ts),
// each write in its own immediate transaction.
import type { Db } from './connection';
import type { SorterMessage } from '../model/messages';
import { destinationBoardWrites } from './destination-board-store';
import {
  type SortationRow,
  type StoredMessage,
  historyPayload,
  messageColumns,
  messageDelete,
  messageInsert,
  sortationMessage,
} from './queue-rows';
import { merged } from '../lib/host/merged';

/** Who received a message, when, and how the read was proved: written to delivered_history as the message leaves. */
export interface Delivery {
  deliveredAt: string;
  clientAddress: string | null;
  /** Which delivery of the message this was (1 = first; more = handed out before without proof). */
  attempt?: number;
  /** What proved that the client read it (docs/queue-semantics.md); null if not recorded. */
  readProof?: string | null;
}

/** Writing the durable queues (run by the writer thread, db/writer.ts, inside its transaction). */
export interface QueueWrites {
  /**
   * Add messages in order, all or none; returns their ids. `ids` gives them (a message handed out
   * before its commit already has one: lib/queue/dispatcher.ts, UncommittedMessages); a missing or null one takes the next.
   */
  enqueue(messages: SorterMessage[], receivedAt: string, ids?: Array<number | null>): number[];
  /** Remove a delivered message and record it in the history; false if it was already gone. */
  deliver(stored: StoredMessage, delivery: Delivery): boolean;
  /** Empty both queues (test mode re-seeds from the replay file at each start). */
  clearQueues(): void;
  /** Take out the REQUESTs for `trackId` older than `newerId` (the item went round again); returns how many. */
  supersedeRequests(trackId: string, newerId: number, at: string): number;
  /** Take out the REQUESTs older than an age (`OlderThan`); returns how many. */
  expireRequests(older: OlderThan, at: string): number;
}

/**
 * The rows older than an age (lib/queue/arrivals.ts, StoredAges.olderThan): those that arrived in
 * this run up to `upToId` (0: none), by their arrival on the clock that never steps; those of an
 * earlier run (below `firstId`) by their stored time, before `before` (ISO).
 */
export interface OlderThan {
  upToId: number;
  firstId: number;
  before: string;
}

/** A message's delivered_history row, as it leaves its queue (a delivery, or a REQUEST taken out with its reason). */
function historyInsert(db: Db): (stored: StoredMessage, delivery: Delivery, removedReason?: 'Superseded' | 'Expired') => void {
  const insert = db.prepare(`
    INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination,
      payload, received_at, delivered_at, client_address, attempt, read_proof, removed_reason)
    VALUES (@queue, @message_id, @type, @message_code, @track_id, @barcode, @destination,
      @payload, @received_at, @delivered_at, @client_address, @attempt, @read_proof, @removed_reason)`);
  return (stored, delivery, removedReason) =>
    void insert.run(
      merged(messageColumns(stored), {
        payload: historyPayload(stored.message),
        delivered_at: delivery.deliveredAt,
        client_address: delivery.clientAddress,
        attempt: delivery.attempt ?? 1,
        read_proof: delivery.readProof ?? null,
        removed_reason: removedReason ?? null,
      }),
    );
}

/** Which REQUESTs the expiry takes out, with `OlderThan`'s fields as its parameters. */
export const EXPIRED_WHERE = '((id >= @firstId AND id <= @upToId) OR (id < @firstId AND received_at < @before))';

/**
 * The statements that copy the REQUESTs matching `where` to the history and delete them. Both go
 * through the REQUESTs' own index (migrations/005), which holds no VERIFY: the expiry's id ranges
 * would otherwise walk every row in them, and in a WCS outage the VERIFYs pile up there (36 ms a
 * look at 180,000 rows on the development machine, 0.025 ms this way).
 */
export function requestRemovalSql(where: string): { select: string; remove: string } {
  const from = 'sortation_queue INDEXED BY sortation_queue_request_track';
  return {
    select: `SELECT * FROM ${from} WHERE type = 'REQUEST' AND ${where} ORDER BY id`,
    remove: `DELETE FROM ${from} WHERE type = 'REQUEST' AND ${where}`,
  };
}

/**
 * REQUESTs taken out of the sortation queue without reaching a WCS: superseded by the item's
 * newer REQUEST, or expired; each into the history with its reason, no client, no proof.
 */
function requestRemovals(db: Db, insertHistory: ReturnType<typeof historyInsert>) {
  const removeWithReason = (reason: 'Superseded' | 'Expired', where: string) => {
    const sql = requestRemovalSql(where);
    const select = db.prepare<Record<string, string | number>, SortationRow>(sql.select);
    const remove = db.prepare(sql.remove);
    return (params: Record<string, string | number>, at: string): number => {
      for (const row of select.all(params)) {
        insertHistory(
          { id: row.id, queue: 'sortation', message: sortationMessage(row), receivedAt: row.received_at },
          { deliveredAt: at, clientAddress: null },
          reason,
        );
      }
      return remove.run(params).changes;
    };
  };
  const superseded = removeWithReason('Superseded', 'track_id = @trackId AND id < @newerId');
  const expired = removeWithReason('Expired', EXPIRED_WHERE);
  return {
    supersedeRequests: db.transaction((trackId: string, newerId: number, at: string): number => superseded({ trackId, newerId }, at)),
    expireRequests: db.transaction((older: OlderThan, at: string): number =>
      expired({ upToId: older.upToId, firstId: older.firstId, before: older.before }, at),
    ),
  };
}

/** The queue writes on an open, migrated database; each runs in its own (nested) transaction. */
export function queueWrites(db: Db): QueueWrites {
  const insert = messageInsert(db);
  const deleteMessage = messageDelete(db);
  const insertHistory = historyInsert(db);
  const board = destinationBoardWrites(db);

  // A SCAN also updates its destination's tile on the board, in the same commit.
  const enqueue = db.transaction((messages: SorterMessage[], receivedAt: string, ids?: Array<number | null>): number[] =>
    messages.map((m, i) => {
      const id = insert(m, receivedAt, ids?.[i] ?? null);
      if (m.Type === 'SCAN') board.scanned(m, receivedAt);
      return id;
    }),
  );

  const deliver = db.transaction((stored: StoredMessage, delivery: Delivery): boolean => {
    if (deleteMessage(stored) === 0) return false;
    insertHistory(stored, delivery);
    return true;
  });

  const { supersedeRequests, expireRequests } = requestRemovals(db, insertHistory);

  const clearQueues = db.transaction(() => {
    // Their ids start at 1 again (the deletes raised the floors: migrations/010).
    db.exec(`DELETE FROM sortation_queue; DELETE FROM destination_queue;
      UPDATE id_floors SET floor = 0 WHERE name IN ('sortation_queue', 'destination_queue');`);
  });

  return {
    enqueue: (messages, receivedAt, ids) => enqueue.immediate(messages, receivedAt, ids),
    deliver: (stored, delivery) => deliver.immediate(stored, delivery),
    clearQueues: () => clearQueues.immediate(),
    supersedeRequests: (trackId, newerId, at) => supersedeRequests.immediate(trackId, newerId, at),
    expireRequests: (older, at) => expireRequests.immediate(older, at),
  };
}
