// The hourly housekeeping: purge old delivered history, checkpoint the WAL.
import type { ServiceStores } from '../db/service-stores';
import { scheduledFunction } from '../lib/functions/define';
import type { Logger } from '../lib/process/logger';
import { type HandlerResult, ok } from '../lib/functions/results';

/** What housekeeping needs. */
export interface HousekeepingDeps {
  history: Pick<ServiceStores['history'], 'purgeHistory' | 'checkpoint'>;
  clock: () => Date;
  settings: { HistoryRetentionDays: number };
  log: Logger;
  /** 'Stopping' ends a purge between two chunks (the rest waits for the next run). */
  state?: () => 'Running' | 'Stopping';
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Rows of each history table deleted per transaction. The writer commits the sorter's messages
 * between two chunks, so a purge delays them by one chunk at most (about 3 ms of work and 0.3 MB
 * of WAL here), never by the whole purge: an hour at 30 items/s is 324,000 rows, one second of
 * work and 50 MB of WAL in a single transaction, and far more after the retention is shortened.
 */
export const PURGE_CHUNK_ROWS = 1000;

/** The pause between two chunks, at least: the purge leaves most of the writer's time to the traffic. */
const PURGE_PAUSE_MS = 10;

/** How long the hourly checkpoint may wait for readers (an operator's sqlite3, a backup) before it gives up. */
const CHECKPOINT_WAIT_MS = 100;

/** Scheduled: purge delivered history older than the retention in short chunks, then checkpoint and truncate the WAL. */
export async function housekeeping(deps: HousekeepingDeps): Promise<HandlerResult> {
  const cutoff = new Date(deps.clock().getTime() - deps.settings.HistoryRetentionDays * DAY_MS).toISOString();
  let purged = 0;
  let chunks = 0;
  const started = Date.now();
  for (;;) {
    if (deps.state?.() === 'Stopping') break;
    const t = Date.now();
    const n = await deps.history.purgeHistory(cutoff, PURGE_CHUNK_ROWS);
    purged += n;
    chunks += 1;
    // Nothing purged: nothing older is left. (Not "less than a chunk": a chunk is the oldest rows
    // by id, and an assignment posted before the cutoff but settled after it stays among them.)
    if (n === 0) break;
    // As long again as the chunk took (a slow disk), and never less than the pause.
    await new Promise((r) => setTimeout(r, Math.max(PURGE_PAUSE_MS, Date.now() - t)));
  }
  // Between transactions, waiting for readers only briefly: the writer commits nothing meanwhile.
  const checkpoint = await deps.history.checkpoint('TRUNCATE', CHECKPOINT_WAIT_MS);
  const result = { PurgedHistoryRows: purged, Chunks: chunks, PurgeMs: Date.now() - started, Cutoff: cutoff, Checkpoint: checkpoint };
  deps.log.info(result, `housekeeping: purged ${purged} history rows delivered before ${cutoff}`);
  return ok(result);
}

export const fn = scheduledFunction(housekeeping);
