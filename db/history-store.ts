// The delivered-message history: its extent, the purge of its oldest rows, and the WAL checkpoint
// housekeeping asks for.
import type { Db } from './connection';
import { pragmaNumber } from './sqlite';
import { walCheckpoint } from './wal-limits';

/** Reading the delivered-message history. */
export interface HistoryReads {
  /** Rows in the history. */
  size(): number;
  /** The latest `limit` deliveries, newest first. */
  latest(limit: number): DeliverySeen[];
  /** How many rows the history holds (from its ids, without counting them) and the time it spans. */
  extent(): HistoryExtent;
  /**
   * The time before which about `share` (0..1) of the history's rows lie, the oldest first: the
   * cutoff that makes the purge take that share (1: all of it). Null for an empty history.
   */
  timeAtShare(share: number): string | null;
}

/** The history's rows and span, read from the ends of its tables (a count would read them all). */
export interface HistoryExtent {
  /** Rows of delivered_history and outbox_history, from the range of their ids. */
  rows: number;
  /** The oldest and newest times it holds (delivered_history's delivered_at, else outbox_history's settled_at); null when empty. */
  oldestAt: string | null;
  newestAt: string | null;
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
   * time), and outbox entries dropped before it, the oldest first, at most `limit` of each table;
   * returns how many. Housekeeping calls
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
  const size = db.prepare<[], number>('SELECT count(*) FROM delivered_history').pluck();
  const latest = db.prepare<[number], DeliverySeen>(`
    SELECT delivered_at AS DeliveredAt, queue AS Queue, type AS Type, track_id AS TrackID, destination AS Destination, client_address AS Client,
           CAST(round((julianday(delivered_at) - julianday(received_at)) * 86400000) AS INTEGER) AS WaitedMs
    FROM delivered_history ORDER BY id DESC LIMIT ?`);
  // Ids are given in the order of the rows' times and the purge takes the oldest, so the ids left
  // are one range with few gaps: its length is the rows, read from the two ends of the B-tree.
  const delivered = db.prepare(`SELECT min(id) AS first, max(id) AS last,
    (SELECT delivered_at FROM delivered_history ORDER BY id LIMIT 1) AS oldest,
    (SELECT delivered_at FROM delivered_history ORDER BY id DESC LIMIT 1) AS newest FROM delivered_history`);
  const outbox = db.prepare(`SELECT min(outbox_id) AS first, max(outbox_id) AS last,
    (SELECT settled_at FROM outbox_history ORDER BY outbox_id LIMIT 1) AS oldest,
    (SELECT settled_at FROM outbox_history ORDER BY outbox_id DESC LIMIT 1) AS newest FROM outbox_history`);
  const deliveredAt = db.prepare('SELECT delivered_at FROM delivered_history WHERE id >= ? ORDER BY id LIMIT 1').pluck();
  const settledAt = db.prepare('SELECT settled_at FROM outbox_history WHERE outbox_id >= ? ORDER BY outbox_id LIMIT 1').pluck();
  type Ends = { first: number | null; last: number | null; oldest: string | null; newest: string | null };
  const span = (e: Ends) => (e.first === null || e.last === null ? 0 : e.last - e.first + 1);
  return {
    size: () => size.get() ?? 0,
    latest: (limit) => latest.all(limit),
    extent() {
      const d = delivered.get() as Ends;
      const o = outbox.get() as Ends;
      const ends = span(d) > 0 ? d : o;
      return { rows: span(d) + span(o), oldestAt: ends.oldest, newestAt: ends.newest };
    },
    timeAtShare(share) {
      const d = delivered.get() as Ends;
      const [ends, at] = span(d) > 0 ? [d, deliveredAt] : [outbox.get() as Ends, settledAt];
      if (ends.first === null || ends.last === null) return null;
      // All of it: just after the newest row.
      if (share >= 1) return ends.newest === null ? null : new Date(Date.parse(ends.newest) + 1).toISOString();
      const id = ends.first + Math.floor(Math.max(0, share) * (ends.last - ends.first + 1));
      return (at.get(id) as string | undefined) ?? null;
    },
  };
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
  // What the sorter could not use goes the same way, by when it was dropped; outbox_history keeps
  // its fate and reason, and the count of drops stays (outbox_dropped_counts, migrations/015).
  const purgeDropped = db.prepare(`DELETE FROM outbox_dropped WHERE id IN
    (SELECT id FROM (SELECT id, dropped_at FROM outbox_dropped ORDER BY id LIMIT @limit) WHERE dropped_at < @cutoff)`);
  return {
    purgeHistory: (cutoff, limit) =>
      purgeDelivered.run({ cutoff, limit }).changes +
      purgeOutbox.run({ cutoff, limit }).changes +
      purgeDropped.run({ cutoff, limit }).changes,
    checkpoint(mode = 'TRUNCATE', waitMs) {
      const before = pragmaNumber(db, 'busy_timeout');
      if (waitMs !== undefined) db.pragma(`busy_timeout = ${Math.max(0, Math.floor(waitMs))}`);
      try {
        const row = walCheckpoint(db, mode === 'RESTART' ? 'RESTART' : 'TRUNCATE');
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
