// Counting the rows of a queue table or the outbox in slices. SQLite counts a table by walking
// it: 11 ms at 180,000 queued REQUESTs on the development machine and 65 ms at a million (a WCS
// away for hours leaves that many VERIFYs behind), several times that on an edge box's CPU, and
// the reads run on the main thread, which carries the sorter's telegrams. A slice is one
// statement, and so one snapshot, over at most `limit` rows in id order: each row is counted
// once, as it stood when its slice was read. Small tables are counted whole, in one statement.
import type { Db } from './connection';

/**
 * Rows a slice of a long table is read in, counted here or searched (db/item-trace.ts): about 1 ms
 * on the development machine, a few on an edge box's CPU.
 */
export const SLICE_ROWS = 10_000;

/** A turn of the event loop given back between two slices (I/O callbacks run before it resolves). */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The tables counted this way: their ids are unique integers (INTEGER PRIMARY KEY). */
export type CountedTable = 'sortation_queue' | 'destination_queue' | 'outbox';

/** The rows of a count, and those among the ids asked about (the claims being handed out). */
export interface Counted {
  rows: number;
  among: number;
}

/** One slice: its rows, those among the ids asked about, and its last id (null: no rows). */
export interface CountSlice extends Counted {
  last: number | null;
}

/** Counting one table, whole or a slice at a time (read-only statements, prepared once). */
export interface TableCount {
  /**
   * The highest id less the lowest, plus one: never fewer than the rows (ids are unique), and read
   * from the two ends of the table's B-tree. 0: the table is empty.
   */
  span(): number;
  /** Every row, and those whose id is in `ids` (a JSON array), in one statement. */
  whole(ids: string): Counted;
  /** The first `limit` rows from id `from` on, those whose id is in `ids`, and the slice's last id. */
  slice(ids: string, from: number, limit: number): CountSlice;
}

/** The counting statements of `table` on an open, migrated database. */
export function tableCount(db: Db, table: CountedTable): TableCount {
  const span = db.prepare<[], number>(`SELECT coalesce((SELECT max(id) FROM ${table}) - (SELECT min(id) FROM ${table}) + 1, 0)`).pluck();
  const whole = db.prepare<[string], Counted>(`SELECT (SELECT count(*) FROM ${table}) AS rows,
    (SELECT count(*) FROM ${table} WHERE id IN (SELECT value FROM json_each(?))) AS among`);
  // The slice's rows are stepped through in id order (no count of a range walks fewer pages); the
  // ids asked about are looked up one by one within its bounds.
  const slice = db.prepare<{ ids: string; from: number; limit: number }, CountSlice>(`
    SELECT rows, last, (SELECT count(*) FROM ${table} WHERE id IN (SELECT value FROM json_each(@ids)) AND id BETWEEN @from AND last) AS among
    FROM (SELECT count(*) AS rows, max(id) AS last FROM (SELECT id FROM ${table} WHERE id >= @from ORDER BY id LIMIT @limit))`);
  return {
    span: () => span.get() ?? 0,
    whole: (ids) => whole.get(ids) ?? { rows: 0, among: 0 }, // count(*) always has its row
    slice: (ids, from, limit) => slice.get({ ids, from, limit }) ?? { rows: 0, among: 0, last: null }, // an aggregate's row is always there
  };
}
