// The outbox: assignments and destination settings waiting for the sorter's ACK, in order.
import type { Db } from './connection';
import { lastIdOf, nextId } from './queue-rows';
import { merged } from '../lib/host/merged';
import type { OutboundMessage } from '../model/messages';
import { destinationBoardWrites } from './destination-board-store';
import { type TableCount, tableCount } from './table-count';

/**
 * How many outbox ids are reserved at once for entries sent before their sync (migrations/011):
 * one synced transaction per this many entries, and at most this many numbers skipped after a crash.
 */
export const RESERVED_IDS_AT_A_TIME = 1000;

/** A message in the outbox, in the order it must reach the sorter. */
export interface OutboxEntry {
  id: number;
  message: OutboundMessage;
  createdAt: string;
}

/** Reading what the service still has to deliver to the sorter (main thread). */
export interface OutboxReads {
  /** The oldest entries, in order. */
  peek(limit: number): OutboxEntry[];
  /** The entries after outbox id `afterId`, in order. */
  after(afterId: number, limit: number): OutboxEntry[];
  /** Entries waiting. */
  depth(): number;
  /** Counting the entries a slice at a time, for the figures of a long outbox (lib/queue/live-counts.ts). */
  tally: TableCount;
  /** Id of the newest entry waiting, 0 when the outbox is empty. */
  lastId(): number;
}

/** Writing the outbox, durable until acknowledged (writer thread). */
export interface OutboxWrites {
  /** Add a message for the sorter; returns its outbox id. */
  addToOutbox(message: OutboundMessage, clientAddress: string | null, createdAt: string): number;
  /** Remove an entry the sorter acknowledged; false if already gone. */
  removeFromOutbox(id: number): boolean;
  /**
   * The highest outbox id that may have reached the sorter before its row was synced
   * (migrations/011): ids up to it are never given again, even if a power cut lost their rows.
   */
  reservedUpTo(): number;
  /** Raise that reservation (in a transaction that is synced before any entry under it is sent). */
  reserveUpTo(id: number): void;
  /** At the writer's start: new rows take ids above every reserved one, whatever a power cut kept. */
  skipReserved(): void;
  /** At a clean stop, everything sent being synced: the reservation comes down to the last id given, so numbering goes on without a gap. */
  releaseReserved(): void;
}

/** Both, on one connection (tests, tools). */
export type OutboxStore = OutboxReads & OutboxWrites;

interface OutboxRow {
  id: number;
  kind: 'ASSIGNMENT' | 'DESTINATION';
  track_id: string | null;
  barcode: string | null;
  destination: string;
  destination_status: string | null;
  destination_text: string | null;
  light_status: string | null;
  light_color: string | null;
  batch_door_status: string | null;
  created_at: string;
}

function toMessage(row: OutboxRow): OutboundMessage {
  if (row.kind === 'ASSIGNMENT') {
    return { kind: 'ASSIGNMENT', body: { TrackID: row.track_id ?? '', Destination: row.destination, Barcode: row.barcode ?? '' } };
  }
  return {
    kind: 'DESTINATION',
    body: {
      Destination: row.destination,
      DestinationStatus: row.destination_status as never,
      DestinationText: row.destination_text ?? '',
      LightStatus: row.light_status as never,
      LightColor: row.light_color as never,
      BatchDoorStatus: row.batch_door_status as never,
    },
  };
}

const toEntry = (row: OutboxRow): OutboxEntry => ({ id: row.id, message: toMessage(row), createdAt: row.created_at });

/** The outbox reads on an open, migrated database. */
export function outboxReads(db: Db): OutboxReads {
  const peek = db.prepare<[number], OutboxRow>('SELECT * FROM outbox ORDER BY id LIMIT ?');
  const after = db.prepare<[number, number], OutboxRow>('SELECT * FROM outbox WHERE id > ? ORDER BY id LIMIT ?');
  const tally = tableCount(db, 'outbox');
  const lastId = db.prepare<[], number>('SELECT coalesce(max(id), 0) FROM outbox').pluck();
  return {
    peek: (limit) => peek.all(limit).map(toEntry),
    after: (afterId, limit) => after.all(afterId, limit).map(toEntry),
    depth: () => tally.whole('[]').rows,
    tally,
    lastId: () => lastId.get() ?? 0,
  };
}

/** The outbox writes on an open, migrated database. */
export function outboxWrites(db: Db): OutboxWrites {
  const insert = db.prepare(`
    INSERT INTO outbox (id, kind, track_id, barcode, destination, destination_status, destination_text,
      light_status, light_color, batch_door_status, client_address, created_at)
    VALUES (${nextId('outbox')}, @kind, @track_id, @barcode, @destination, @destination_status, @destination_text,
      @light_status, @light_color, @batch_door_status, @client_address, @created_at)`);
  const remove = db.prepare('DELETE FROM outbox WHERE id = ?');
  const reserved = db.prepare<[], number>('SELECT upto FROM outbox_reserved').pluck();
  const reserve = db.prepare('UPDATE outbox_reserved SET upto = ? WHERE upto < ?');
  const skip = db.prepare(
    "UPDATE id_floors SET floor = (SELECT upto FROM outbox_reserved) WHERE name = 'outbox' AND floor < (SELECT upto FROM outbox_reserved)",
  );
  const release = db.prepare(`UPDATE outbox_reserved SET upto = ${lastIdOf('outbox')}`);
  const board = destinationBoardWrites(db);
  const insertEntry = (message: OutboundMessage, clientAddress: string | null, createdAt: string): number => {
    const none: Record<string, string | null> = {
      track_id: null,
      barcode: null,
      destination_status: null,
      destination_text: null,
      light_status: null,
      light_color: null,
      batch_door_status: null,
    };
    const columns =
      message.kind === 'ASSIGNMENT'
        ? merged(none, { track_id: message.body.TrackID, barcode: message.body.Barcode, destination: message.body.Destination })
        : merged(none, {
            destination: message.body.Destination,
            destination_status: message.body.DestinationStatus,
            destination_text: message.body.DestinationText,
            light_status: message.body.LightStatus,
            light_color: message.body.LightColor,
            batch_door_status: message.body.BatchDoorStatus,
          });
    // Its id is also the number of its telegram to the sorter: never given twice (nextId).
    return Number(
      insert.run(merged(columns, { id: null, kind: message.kind, client_address: clientAddress, created_at: createdAt })).lastInsertRowid,
    );
  };
  // A destination setting and its tile on the board, all or none, in the same commit (a savepoint
  // inside the writer's transaction); an assignment stays one statement.
  const addSetting = db.transaction(
    (message: OutboundMessage & { kind: 'DESTINATION' }, clientAddress: string | null, createdAt: string): number => {
      const id = insertEntry(message, clientAddress, createdAt);
      board.set(message.body, clientAddress, createdAt);
      return id;
    },
  );
  return {
    addToOutbox: (message, clientAddress, createdAt) =>
      message.kind === 'DESTINATION' ? addSetting(message, clientAddress, createdAt) : insertEntry(message, clientAddress, createdAt),
    removeFromOutbox: (id) => remove.run(id).changes > 0,
    reservedUpTo: () => reserved.get() ?? 0, // migrations/011 inserts its one row
    reserveUpTo: (id) => void reserve.run(id, id),
    skipReserved: () => void skip.run(),
    releaseReserved: () => void release.run(),
  };
}

/** Reads and writes on one connection, synchronously (tests, tools). */
export function createOutboxStore(db: Db): OutboxStore {
  return { ...outboxReads(db), ...outboxWrites(db) };
}
