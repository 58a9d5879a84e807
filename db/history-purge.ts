// The history purge in short chunks, each its own transaction through the writer, so that the
// sorter's messages are committed between two: the age bound (handlers/housekeeping.ts) and the
// size bound (handlers/history-bound.ts) both purge this way.

/**
 * Rows of each history table deleted per transaction. The writer commits the sorter's messages
 * between two chunks, so a purge delays them by one chunk at most (about 3 ms of work and 0.3 MB
 * of WAL here), never by the whole purge: an hour at 30 items/s is 324,000 rows, one second of
 * work and 50 MB of WAL in a single transaction, and far more after the retention is shortened.
 */
export const PURGE_CHUNK_ROWS = 1000;

/** The pause between two chunks, at least: the purge leaves most of the writer's time to the traffic. */
export const PURGE_PAUSE_MS = 10;

/** What a purge did. */
export interface PurgeDone {
  purged: number;
  chunks: number;
  ms: number;
}

/**
 * Purge the history older than `cutoff` (ISO time), the oldest rows first, a chunk at a time with
 * a pause between two; `stopping` ends it between two chunks (the rest waits for the next run).
 */
export async function purgeInChunks(
  history: { purgeHistory(cutoff: string, limit: number): Promise<number> },
  cutoff: string,
  stopping: () => boolean = () => false,
  /** After each chunk that purged rows, before the pause (the size bound makes the WAL start over here). */
  afterChunk?: () => Promise<unknown>,
): Promise<PurgeDone> {
  let purged = 0;
  let chunks = 0;
  const started = Date.now();
  for (;;) {
    if (stopping()) break;
    const t = Date.now();
    const n = await history.purgeHistory(cutoff, PURGE_CHUNK_ROWS);
    purged += n;
    chunks += 1;
    // Nothing purged: nothing older is left. (Not "less than a chunk": a chunk is the oldest rows
    // by id, and an assignment posted before the cutoff but settled after it stays among them.)
    if (n === 0) break;
    await afterChunk?.();
    // As long again as the chunk took (a slow disk), and never less than the pause.
    await new Promise((r) => setTimeout(r, Math.max(PURGE_PAUSE_MS, Date.now() - t)));
  }
  return { purged, chunks, ms: Date.now() - started };
}
