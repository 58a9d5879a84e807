// The delivered-message history: purge by age, and the WAL checkpoint housekeeping asks for.
import type { Db } from './connection';

/** Reading the delivered-message history. */
export interface HistoryReads {
  /** Rows in the history. */
  size(): number;
  /** The latest `limit` deliveries, newest first. */
  latest(limit: number): DeliverySeen[];
}

/** A delivery as the dashboard shows it. */
export interface DeliverySeen {
  DeliveredAt: string;
  Queue: 'sortation' | 'destination';
  Type: string;
  TrackID: string | null;
  Destination: string | null;
  Client: string | null;
  /** From the message's arrival to its delivery (ms). */
  WaitedMs: number;
}

/** Housekeeping of the history and the WAL file (writer thread). */
export interface HistoryWrites {
  /**
   * Delete history rows delivered (or, for posted assignments, settled) before `cutoff` (ISO
   * time), the oldest first, at most `limit` of each table; returns how many. Housekeeping calls
   * it until it returns less than the limit, so that each transaction stays short.
   */
  purgeHistory(cutoff: string, limit: number): number;
  /**
   * Fold the WAL back into the database file (outside any transaction): TRUNCATE empties the file,
   * RESTART makes the next commit write from its start again. `waitMs`: how long to wait for
   * readers (default: the connection's busy timeout).
   */
  checkpoint(mode?: 'TRUNCATE' | 'RESTART', waitMs?: number): { busy: boolean; walFrames: number; checkpointed: number };
}

/** The history reads on an open, migrated database. */
export function historyReads(db: Db): HistoryReads {
  const size = db.prepare('SELECT count(*) FROM delivered_history').pluck();
  const latest = db.prepare(`
    SELECT delivered_at AS DeliveredAt, queue AS Queue, type AS Type, track_id AS TrackID, destination AS Destination, client_address AS Client,
           CAST(round((julianday(delivered_at) - julianday(received_at)) * 86400000) AS INTEGER) AS WaitedMs
    FROM delivered_history ORDER BY id DESC LIMIT ?`);
  return { size: () => size.get() as number, latest: (limit) => latest.all(limit) as DeliverySeen[] };
}

/** The history writes on an open, migrated database. */
export function historyWrites(db: Db): HistoryWrites {
  // The oldest `limit` rows by id, of which those older than the cutoff: rows are added in the
  // order of their time, so the oldest rows are the candidates, and a chunk reads `limit` rows
  // whatever the tables hold (no index on the times: migrations/008). A row that is not yet old
  // enough stays, and so may a few added in the same millisecond after it; the next run takes
  // them. An outbox_history row (written when its entry was settled: acknowledged or dropped) goes
  // once its settlement is older than the cutoff too.
  const purgeDelivered = db.prepare(`DELETE FROM delivered_history WHERE id IN
    (SELECT id FROM (SELECT id, delivered_at FROM delivered_history ORDER BY id LIMIT @limit) WHERE delivered_at < @cutoff)`);
  const purgeOutbox = db.prepare(`DELETE FROM outbox_history WHERE outbox_id IN
    (SELECT outbox_id FROM (SELECT outbox_id, created_at, settled_at FROM outbox_history ORDER BY outbox_id LIMIT @limit)
     WHERE created_at < @cutoff AND settled_at < @cutoff)`);
  return {
    purgeHistory: (cutoff, limit) => purgeDelivered.run({ cutoff, limit }).changes + purgeOutbox.run({ cutoff, limit }).changes,
    checkpoint(mode = 'TRUNCATE', waitMs) {
      const before = db.pragma('busy_timeout', { simple: true }) as number;
      if (waitMs !== undefined) db.pragma(`busy_timeout = ${Math.max(0, Math.floor(waitMs))}`);
      try {
        const [row] = db.pragma(`wal_checkpoint(${mode === 'RESTART' ? 'RESTART' : 'TRUNCATE'})`) as Array<{ busy: number; log: number; checkpointed: number }>;
        return { busy: row.busy !== 0, walFrames: row.log, checkpointed: row.checkpointed };
      } finally {
        if (waitMs !== undefined) db.pragma(`busy_timeout = ${before}`);
      }
    },
  };
}

/** Reads and writes on one connection, synchronously (tests, tools). */
export function createHistoryStore(db: Db): HistoryReads & HistoryWrites {
  return { ...historyReads(db), ...historyWrites(db) };
}
