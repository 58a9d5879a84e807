// Dead letters: messages handed out MaxDeliveries times without proof of the read, moved out of
// their queue into dead_letters, and sent back to it by an operator.
import type { Db } from './connection';
import type { QueueName, SorterMessage } from '../model/messages';
import { type StoredMessage, messageColumns, messageDelete, messageInsert } from './queue-rows';
import { merged } from '../lib/host/merged';

/** Why and from whom a message is moved to the dead letters. */
export interface DeadLetterInfo {
  /** Deliveries that ended without proof of the read. */
  attempts: number;
  /** The client that had it last. */
  clientAddress: string | null;
  /** How the last delivery ended: NoProof or Reset. */
  lastReturn: string;
  deadAt: string;
}

/** A dead letter as operators and the admin route see it. */
export interface DeadLetter {
  Id: number;
  Queue: QueueName;
  MessageId: number;
  Type: SorterMessage['Type'];
  TrackID: string | null;
  Destination: string | null;
  ReceivedAt: string;
  DeadAt: string;
  Attempts: number;
  LastClient: string | null;
  LastReturn: string;
  Message: SorterMessage;
}

/** A dead letter sent back to its queue: where, under which id, after how many unproven deliveries. */
export interface Requeued {
  queue: QueueName;
  messageId: number;
  attempts: number;
}

/** Reading the dead letters (main thread's read-only connection). */
export interface DeadLetterReads {
  /** Dead letters per queue. */
  deadLetterCounts(): Record<QueueName, number>;
  /** The oldest `limit` dead letters (of one queue, or both). */
  listDeadLetters(limit: number, queue?: QueueName): DeadLetter[];
}

/** Writing the dead letters (writer thread). */
export interface DeadLetterWrites {
  /** Move a message from its queue to the dead letters; false if it was no longer queued. */
  deadLetter(stored: StoredMessage, info: DeadLetterInfo): boolean;
  /** Send dead letters back to their queues under their old ids (`ids` null: all of them); returns what moved. */
  requeueDeadLetters(ids: number[] | null): Requeued[];
}

interface DeadLetterRow {
  id: number;
  queue: QueueName;
  message_id: number;
  type: SorterMessage['Type'];
  track_id: string | null;
  destination: string | null;
  payload: string;
  received_at: string;
  dead_at: string;
  attempts: number;
  last_client_address: string | null;
  last_return: string;
}

const asDeadLetter = (r: DeadLetterRow): DeadLetter => ({
  Id: r.id,
  Queue: r.queue,
  MessageId: r.message_id,
  Type: r.type,
  TrackID: r.track_id,
  Destination: r.destination,
  ReceivedAt: r.received_at,
  DeadAt: r.dead_at,
  Attempts: r.attempts,
  LastClient: r.last_client_address,
  LastReturn: r.last_return,
  Message: JSON.parse(r.payload) as SorterMessage,
});

/** The dead-letter reads on an open, migrated database. */
export function deadLetterReads(db: Db): DeadLetterReads {
  // Kept by triggers as dead letters come and go (migrations/015): counting dead_letters walks it.
  const counts = db.prepare<[], { queue: QueueName; n: number }>('SELECT queue, n FROM dead_letter_counts');
  const list = db.prepare<{ limit: number; queue: QueueName | null }, DeadLetterRow>(
    'SELECT * FROM dead_letters WHERE @queue IS NULL OR queue = @queue ORDER BY id LIMIT @limit',
  );
  return {
    deadLetterCounts() {
      const out: Record<QueueName, number> = { sortation: 0, destination: 0 };
      for (const r of counts.all()) out[r.queue] = r.n;
      return out;
    },
    listDeadLetters: (limit, queue) => list.all({ limit, queue: queue ?? null }).map(asDeadLetter),
  };
}

/** The dead-letter writes on an open, migrated database; each in its own (nested) transaction. */
export function deadLetterWrites(db: Db): DeadLetterWrites {
  const insert = messageInsert(db);
  const deleteMessage = messageDelete(db);
  const insertDead = db.prepare(`
    INSERT INTO dead_letters (queue, message_id, type, message_code, track_id, barcode, destination, payload,
      received_at, dead_at, attempts, last_client_address, last_return)
    VALUES (@queue, @message_id, @type, @message_code, @track_id, @barcode, @destination, @payload,
      @received_at, @dead_at, @attempts, @last_client_address, @last_return)`);
  const selectAll = db.prepare<[], Row>('SELECT id, queue, message_id, payload, received_at, attempts FROM dead_letters ORDER BY id');
  const selectOne = db.prepare<[number], Row>(
    'SELECT id, queue, message_id, payload, received_at, attempts FROM dead_letters WHERE id = ?',
  );
  const deleteDead = db.prepare('DELETE FROM dead_letters WHERE id = ?');

  const deadLetter = db.transaction((stored: StoredMessage, info: DeadLetterInfo): boolean => {
    if (deleteMessage(stored) === 0) return false;
    insertDead.run(
      merged(messageColumns(stored), {
        payload: JSON.stringify(stored.message),
        dead_at: info.deadAt,
        attempts: info.attempts,
        last_client_address: info.clientAddress,
        last_return: info.lastReturn,
      }),
    );
    return true;
  });

  type Row = Pick<DeadLetterRow, 'id' | 'queue' | 'message_id' | 'payload' | 'received_at' | 'attempts'>;
  const requeue = db.transaction((ids: number[] | null): Requeued[] => {
    const rows = ids === null ? selectAll.all() : ids.map((id) => selectOne.get(id)).filter((r): r is Row => r !== undefined);
    return rows.map((r) => {
      insert(JSON.parse(r.payload) as SorterMessage, r.received_at, r.message_id);
      deleteDead.run(r.id);
      return { queue: r.queue, messageId: r.message_id, attempts: r.attempts };
    });
  });

  return {
    deadLetter: (stored, info) => deadLetter.immediate(stored, info),
    requeueDeadLetters: (ids) => requeue.immediate(ids),
  };
}
