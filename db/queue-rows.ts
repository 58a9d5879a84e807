// A message as rows of the queue tables: its insert (also back under the id it had), its delete,
// and the columns that name it in delivered_history and dead_letters. Shared by the queue writes
// and the dead letters (db/dead-letter-store.ts), which move messages between these tables.
import type { Db } from './connection';
import type { DestinationInfoDto, InductDto, QueueMessages, QueueName, SorterMessage, VerifyDto } from '../model/messages';

/** A message at rest in a queue table. */
export interface StoredMessage<Q extends QueueName = QueueName> {
  id: number;
  queue: Q;
  message: QueueMessages[Q];
  receivedAt: string;
}

/** A row of sortation_queue. */
export interface SortationRow {
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

/** A row of destination_queue. */
export interface DestinationRow {
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

/** The message a sortation_queue row holds. */
export function sortationMessage(row: SortationRow): InductDto | VerifyDto {
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

/** The message a destination_queue row holds. */
export function destinationMessage(row: DestinationRow): DestinationInfoDto {
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

type IdTable = 'sortation_queue' | 'destination_queue' | 'outbox';

/** The highest id a table has given, those of rows that have left it too (id_floors, migrations/010). */
export const lastIdOf = (table: IdTable) =>
  `max((SELECT floor FROM id_floors WHERE name = '${table}'), coalesce((SELECT max(id) FROM ${table}), 0))`;

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

/**
 * A message's fields that the other columns of its delivered_history row do not hold, as a JSON
 * array in the message's order (migrations/012): a REQUEST's [RecirculationCount, Length, Width,
 * Height, Weight], a SCAN's [DestinationStatus, DestinationText, LightStatus, LightColor,
 * ButtonID, BatchDoorStatus], a VERIFY's []. Type, MessageCode, TrackID, Barcode and the
 * InductLocation or Destination are columns already. A row that repeated them all, with their
 * names, took a 512-byte page to itself (about 320 bytes for a REQUEST); now two rows share one,
 * long barcodes too. The view delivered_messages puts the body back together exactly as the
 * client received it (each value's JSON text is kept as JSON.stringify wrote it).
 */
export function historyPayload(m: SorterMessage): string {
  switch (m.Type) {
    case 'REQUEST':
      return JSON.stringify([m.RecirculationCount, m.Length, m.Width, m.Height, m.Weight]);
    case 'VERIFY':
      return '[]';
    case 'SCAN':
      return JSON.stringify([m.DestinationStatus, m.DestinationText, m.LightStatus, m.LightColor, m.ButtonID, m.BatchDoorStatus]);
  }
}

/** The columns that name a message in delivered_history (its payload: `historyPayload`) and dead_letters (its payload: the whole body). */
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
    received_at: stored.receivedAt,
  };
}
