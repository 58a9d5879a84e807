import type { Db } from './connection';

/** Housekeeping of the delivered-message history and the WAL file. */
export interface HistoryStore {
  /** Delete history rows delivered before `cutoff` (ISO time); returns how many. */
  purgeDeliveredBefore(cutoff: string): number;
  /** Fold the WAL back into the database file and truncate it. */
  checkpoint(): { busy: boolean; walFrames: number; checkpointed: number };
  /** Rows in the history. */
  size(): number;
}

/** Build the history store on an open, migrated database. */
export function createHistoryStore(db: Db): HistoryStore {
  const purge = db.prepare('DELETE FROM delivered_history WHERE delivered_at < ?');
  const size = db.prepare('SELECT count(*) FROM delivered_history').pluck();
  return {
    purgeDeliveredBefore: (cutoff) => purge.run(cutoff).changes,
    checkpoint() {
      const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      return { busy: row.busy !== 0, walFrames: row.log, checkpointed: row.checkpointed };
    },
    size: () => size.get() as number,
  };
}
