// How large the WAL may grow before the checkpointer empties it (db/checkpoint-worker.ts).

/** The WAL's bounds. */
export interface WalLimits {
  /** Empty the WAL once it holds more than this (bytes). */
  maxBytes: number;
  /** ... or once it holds more than this share of the disk's free space (0: not by free space). */
  freeShare: number;
  /** How long an emptying checkpoint may hold up the writer, waiting for it and for readers (ms). */
  truncateWaitMs: number;
  /** After one found a reader in the way, the next tries no sooner than this (ms). */
  busyBackoffMs: number;
}

/**
 * Emptying the WAL holds the writer up while it copies what is left, so it is kept for when the
 * WAL endangers the disk: past a quarter of the free space, or past 1 GB (a runaway). Not a small
 * size limit: at 1,000 items/s the WAL passes 16 MB every second (docs/queue-semantics.md).
 */
export const WAL_LIMITS: WalLimits = { maxBytes: 1024 * 1048576, freeShare: 0.25, truncateWaitMs: 100, busyBackoffMs: 10_000 };

/** Must the WAL be emptied now? */
export function truncateNeeded(walBytes: number, freeBytes: number, limits: WalLimits): boolean {
  return walBytes > 0 && (walBytes > limits.maxBytes || (limits.freeShare > 0 && walBytes > freeBytes * limits.freeShare));
}
