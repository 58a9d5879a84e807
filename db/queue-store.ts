// The two queue tables: enqueue, head past the claimed messages, and removal into
// delivered_history.
import type { Db } from './connection';
import type {
  DestinationInfoDto,
  InductDto,
  QueueMessages,
  QueueName,
  SorterMessage,
  VerifyDto,
} from '../model/messages';

/** A message at rest in a queue table. */
export interface StoredMessage<Q extends QueueName = QueueName> {
  id: number;
  queue: Q;
  message: QueueMessages[Q];
  receivedAt: string;
}

/** Who received a message, when, and how the read was proved: written to delivered_history as the message leaves. */
export interface Delivery {
  deliveredAt: string;
  clientAddress: string | null;
  /** Which delivery of the message this was (1 = first; more = handed out before without proof). */
  attempt?: number;
  /** What proved that the client read it (docs/queue-semantics.md); null if not recorded. */
  readProof?: string | null;
}

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
}

/** Writing the durable queues (run by the writer thread, db/writer.ts, inside its transaction). */
export interface QueueWrites {
  /** Add messages in order, all or none; returns their ids. */
  enqueue(messages: SorterMessage[], receivedAt: string): number[];
  /** Remove a delivered message and record it in the history; false if it was already gone. */
  remove(stored: StoredMessage, delivery: Delivery): boolean;
  /** Empty both queues (test mode re-seeds from the replay file at each start). */
  clear(): void;
  /** Take out the REQUESTs for `trackId` older than `newerId` (the item went round again); returns how many. */
  supersede(trackId: string, newerId: number, at: string): number;
  /** Take out the REQUESTs received before `before`; returns how many. */
  expireRequests(before: string, at: string): number;
}

/** Both, on one connection: for tests, the benchmark and tools (the service splits them over two threads). */
export type QueueStore = QueueReads & QueueWrites;

interface SortationRow {
  id: number;
  type: 'REQUEST' | 'VERIFY';
  message_code: number;
  track_id: string;
  barcode: string;
  induct_location: string | null;
  destination: string | null;
  recirculation_count: number | null;
  length: number | null;
  width: number | null;
  height: number | null;
  weight: number | null;
  received_at: string;
}

interface DestinationRow {
  id: number;
  message_code: number;
  destination: string;
  destination_status: DestinationInfoDto['DestinationStatus'];
  destination_text: string;
  light_status: DestinationInfoDto['LightStatus'];
  light_color: DestinationInfoDto['LightColor'];
  button_id: number;
  batch_door_status: DestinationInfoDto['BatchDoorStatus'];
  received_at: string;
}

function sortationMessage(row: SortationRow): InductDto | VerifyDto {
  if (row.type === 'REQUEST') {
    return {
      Type: 'REQUEST',
      TrackID: row.track_id,
      Barcode: row.barcode,
      MessageCode: row.message_code,
      InductLocation: row.induct_location ?? '',
      RecirculationCount: row.recirculation_count ?? 0,
      Length: row.length ?? 0,
      Width: row.width ?? 0,
      Height: row.height ?? 0,
      Weight: row.weight ?? 0,
    };
  }
  return {
    Type: 'VERIFY',
    TrackID: row.track_id,
    Barcode: row.barcode,
    Destination: row.destination ?? '',
    MessageCode: row.message_code,
  };
}

function destinationMessage(row: DestinationRow): DestinationInfoDto {
  return {
    Type: 'SCAN',
    Destination: row.destination,
    DestinationStatus: row.destination_status,
    DestinationText: row.destination_text,
    LightStatus: row.light_status,
    LightColor: row.light_color,
    ButtonID: row.button_id,
    MessageCode: row.message_code,
    BatchDoorStatus: row.batch_door_status,
  };
}

/** Named parameters for one sortation row. */
function sortationParams(m: InductDto | VerifyDto, receivedAt: string) {
  const request = m.Type === 'REQUEST' ? m : undefined;
  return {
    type: m.Type,
    message_code: m.MessageCode,
    track_id: m.TrackID,
    barcode: m.Barcode,
    induct_location: request ? request.InductLocation : null,
    destination: m.Type === 'VERIFY' ? m.Destination : null,
    recirculation_count: request ? request.RecirculationCount : null,
    length: request ? request.Length : null,
    width: request ? request.Width : null,
    height: request ? request.Height : null,
    weight: request ? request.Weight : null,
    received_at: receivedAt,
  };
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
  };
}

/**
 * Insert one message into its queue table; `id` null takes the next id, a number puts it back
 * under the id it had (a dead letter sent back to its place). Returns its id.
 */
export function messageInsert(db: Db): (m: SorterMessage, receivedAt: string, id?: number | null) => number {
  const insertSortation = db.prepare(`
    INSERT INTO sortation_queue (id, type, message_code, track_id, barcode, induct_location, destination,
      recirculation_count, length, width, height, weight, received_at)
    VALUES (@id, @type, @message_code, @track_id, @barcode, @induct_location, @destination,
      @recirculation_count, @length, @width, @height, @weight, @received_at)`);
  const insertDestination = db.prepare(`
    INSERT INTO destination_queue (id, message_code, destination, destination_status, destination_text,
      light_status, light_color, button_id, batch_door_status, received_at)
    VALUES (@id, @message_code, @destination, @destination_status, @destination_text,
      @light_status, @light_color, @button_id, @batch_door_status, @received_at)`);
  return (m, receivedAt, id = null) => {
    const info =
      m.Type === 'SCAN'
        ? insertDestination.run({
            id,
            message_code: m.MessageCode,
            destination: m.Destination,
            destination_status: m.DestinationStatus,
            destination_text: m.DestinationText,
            light_status: m.LightStatus,
            light_color: m.LightColor,
            button_id: m.ButtonID,
            batch_door_status: m.BatchDoorStatus,
            received_at: receivedAt,
          })
        : insertSortation.run({ id, ...sortationParams(m, receivedAt) });
    return Number(info.lastInsertRowid);
  };
}

/** Delete one message from its queue table; returns the rows deleted (0 if it was already gone). */
export function messageDelete(db: Db): (stored: StoredMessage) => number {
  const deletes = {
    sortation: db.prepare('DELETE FROM sortation_queue WHERE id = ?'),
    destination: db.prepare('DELETE FROM destination_queue WHERE id = ?'),
  };
  return (stored) => deletes[stored.queue].run(stored.id).changes;
}

/** The columns that name a message in delivered_history and dead_letters. */
export function messageColumns(stored: StoredMessage) {
  const m = stored.message;
  return {
    queue: stored.queue,
    message_id: stored.id,
    type: m.Type,
    message_code: m.MessageCode,
    track_id: m.Type === 'SCAN' ? null : m.TrackID,
    barcode: m.Type === 'SCAN' ? null : m.Barcode,
    destination: m.Type === 'REQUEST' ? m.InductLocation : m.Destination,
    payload: JSON.stringify(m),
    received_at: stored.receivedAt,
  };
}

/** The queue writes on an open, migrated database; each runs in its own (nested) transaction. */
export function queueWrites(db: Db): QueueWrites {
  const insert = messageInsert(db);
  const deleteMessage = messageDelete(db);
  const insertHistory = db.prepare(`
    INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination,
      payload, received_at, delivered_at, client_address, attempt, read_proof)
    VALUES (@queue, @message_id, @type, @message_code, @track_id, @barcode, @destination,
      @payload, @received_at, @delivered_at, @client_address, @attempt, @read_proof)`);

  const enqueue = db.transaction((messages: SorterMessage[], receivedAt: string): number[] => messages.map((m) => insert(m, receivedAt)));

  const remove = db.transaction((stored: StoredMessage, delivery: Delivery): boolean => {
    if (deleteMessage(stored) === 0) return false;
    insertHistory.run({
      ...messageColumns(stored),
      delivered_at: delivery.deliveredAt,
      client_address: delivery.clientAddress,
      attempt: delivery.attempt ?? 1,
      read_proof: delivery.readProof ?? null,
    });
    return true;
  });

  // Removed without reaching a WCS: into the history with the reason, no client, no proof.
  const removeWithReason = (reason: 'Superseded' | 'Expired', where: string) =>
    db.prepare(`
      INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination,
        payload, received_at, delivered_at, client_address, attempt, read_proof, removed_reason)
      SELECT 'sortation', id, type, message_code, track_id, barcode, induct_location,
        json_object('Type', type, 'TrackID', track_id, 'Barcode', barcode, 'MessageCode', message_code,
          'InductLocation', induct_location, 'RecirculationCount', recirculation_count,
          'Length', length, 'Width', width, 'Height', height, 'Weight', weight),
        received_at, @at, NULL, 1, NULL, '${reason}'
      FROM sortation_queue WHERE type = 'REQUEST' AND ${where}`);
  const historySuperseded = removeWithReason('Superseded', 'track_id = @trackId AND id < @newerId');
  const deleteSuperseded = db.prepare("DELETE FROM sortation_queue WHERE type = 'REQUEST' AND track_id = @trackId AND id < @newerId");
  const historyExpired = removeWithReason('Expired', 'received_at < @before');
  const deleteExpired = db.prepare("DELETE FROM sortation_queue WHERE type = 'REQUEST' AND received_at < @before");
  const supersede = db.transaction((trackId: string, newerId: number, at: string): number => {
    historySuperseded.run({ trackId, newerId, at });
    return deleteSuperseded.run({ trackId, newerId }).changes;
  });
  const expireRequests = db.transaction((before: string, at: string): number => {
    historyExpired.run({ before, at });
    return deleteExpired.run({ before }).changes;
  });

  const clear = db.transaction(() => {
    db.exec(`DELETE FROM sortation_queue; DELETE FROM destination_queue;
      DELETE FROM sqlite_sequence WHERE name IN ('sortation_queue', 'destination_queue');`);
  });

  return {
    enqueue: (messages, receivedAt) => enqueue.immediate(messages, receivedAt),
    remove: (stored, delivery) => remove.immediate(stored, delivery),
    clear: () => clear.immediate(),
    supersede: (trackId, newerId, at) => supersede.immediate(trackId, newerId, at),
    expireRequests: (before, at) => expireRequests.immediate(before, at),
  };
}

/** Reads and writes on one connection, synchronously (tests, benchmark, tools). */
export function createQueueStore(db: Db): QueueStore {
  return { ...queueReads(db), ...queueWrites(db) };
}
