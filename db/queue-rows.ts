// A message as rows of the queue tables: its insert (also back under the id it had), its delete,
// and the columns that name it in delivered_history and dead_letters. Shared by the queue writes
// and the dead letters (db/dead-letter-store.ts), which move messages between these tables.
import type { Db } from './connection';
import type { InductDto, QueueMessages, QueueName, SorterMessage, VerifyDto } from '../model/messages';

/** A message at rest in a queue table. */
export interface StoredMessage<Q extends QueueName = QueueName> {
  id: number;
  queue: Q;
  message: QueueMessages[Q];
  receivedAt: string;
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

type IdTable = 'sortation_queue' | 'destination_queue' | 'outbox';

/** The highest id a table has given, those of rows that have left it too (id_floors, migrations/010). */
export const lastIdOf = (table: IdTable) => `max((SELECT floor FROM id_floors WHERE name = '${table}'), coalesce((SELECT max(id) FROM ${table}), 0))`;

/**
 * The id of a new row: the one given (a dead letter back in its place, a telegram's id given on
 * arrival), or one above every id the table has given: never twice.
 */
export const nextId = (table: IdTable) => `coalesce(@id, ${lastIdOf(table)} + 1)`;

/**
 * Insert one message into its queue table; `id` null takes the next id, a number puts it back
 * under the id it had (a dead letter sent back to its place). Returns its id.
 */
export function messageInsert(db: Db): (m: SorterMessage, receivedAt: string, id?: number | null) => number {
  const insertSortation = db.prepare(`
    INSERT INTO sortation_queue (id, type, message_code, track_id, barcode, induct_location, destination,
      recirculation_count, length, width, height, weight, received_at)
    VALUES (${nextId('sortation_queue')}, @type, @message_code, @track_id, @barcode, @induct_location, @destination,
      @recirculation_count, @length, @width, @height, @weight, @received_at)`);
  const insertDestination = db.prepare(`
    INSERT INTO destination_queue (id, message_code, destination, destination_status, destination_text,
      light_status, light_color, button_id, batch_door_status, received_at)
    VALUES (${nextId('destination_queue')}, @message_code, @destination, @destination_status, @destination_text,
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
