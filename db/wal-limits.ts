// When the checkpoint thread (db/checkpoint-worker.ts) asks the writer to make the WAL start over,
// and when to give the WAL's space back to the disk.

/** The WAL's bounds. */
export interface WalLimits {
  /** Make the WAL start over from its beginning once it holds this much since the last start (bytes). */
  restartBytes: number;
  /** Give the WAL file's space back (empty the file) once it is larger than this (bytes) ... */
  maxBytes: number;
  /** ... or larger than this share of the disk's free space (0: not by free space). */
  freeShare: number;
  /** How long such a checkpoint, run by the writer, may hold it up waiting for readers (ms). */
  writerWaitMs: number;
  /** After one found a reader in the way, the next is asked for no sooner than this (ms). */
  busyBackoffMs: number;
}

/**
 * Start over every 16 MB: a WAL that grows makes each commit's sync also commit the file
 * system's journal (the file's new size and blocks), while one that is reused from its start only
 * writes its frames: a third fewer device writes per commit and half the commit time, measured on
 * ext4 (docs/performance.md). 16 MB is about 10 s of traffic at 30 items/s, and what a restart
 * after a crash reads back. Each start-over holds the writer up for one database sync, so not more
 * often. Emptying the file is kept for when the WAL endangers the disk: past a quarter of the free
 * space, or past 1 GB (a runaway, when a reader kept it from starting over).
 */
export const WAL_LIMITS: WalLimits = {
  restartBytes: 16 * 1048576,
  maxBytes: 1024 * 1048576,
  freeShare: 0.25,
  writerWaitMs: 100,
  busyBackoffMs: 10_000,
};

/**
 * What the writer must be asked for beyond the checkpoint thread's PASSIVE copy: `TRUNCATE` when the WAL file endangers
 * the disk, `RESTART` when the WAL holds `restartBytes` since its last start, else nothing.
 * `walBytes`: the frames since the WAL last started over; `walFileBytes`: the file's size.
 */
export function checkpointNeeded(
  walBytes: number,
  walFileBytes: number,
  freeBytes: number,
  limits: WalLimits,
): 'TRUNCATE' | 'RESTART' | null {
  if (walFileBytes > 0 && (walFileBytes > limits.maxBytes || (limits.freeShare > 0 && walFileBytes > freeBytes * limits.freeShare)))
    return 'TRUNCATE';
  if (walBytes >= limits.restartBytes) return 'RESTART';
  return null;
}

/** What `PRAGMA wal_checkpoint` reports: a reader or writer in the way (1), the WAL's frames, those copied back. */
export interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

/** Run `PRAGMA wal_checkpoint(MODE)` on a connection (any with a `pragma` method) and return its one row. */
export function walCheckpoint(db: { pragma(source: string): unknown }, mode: 'PASSIVE' | 'RESTART' | 'TRUNCATE'): CheckpointRow {
  const rows = db.pragma(`wal_checkpoint(${mode})`);
  const row: unknown = Array.isArray(rows) ? rows[0] : undefined;
  if (!isCheckpointRow(row)) throw new Error(`wal_checkpoint(${mode}) returned no row`);
  return row;
}

function isCheckpointRow(row: unknown): row is CheckpointRow {
  return (
    typeof row === 'object' &&
    row !== null &&
    'busy' in row &&
    typeof row.busy === 'number' &&
    'log' in row &&
    typeof row.log === 'number' &&
    'checkpointed' in row &&
    typeof row.checkpointed === 'number'
  );
}
