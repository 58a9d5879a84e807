// The hourly housekeeping: purge old delivered history, checkpoint the WAL, say how many days of
// history fit.
import { PURGE_CHUNK_ROWS, purgeInChunks } from '../db/history-purge';
import type { ServiceStores } from '../db/service-stores';
import { type HandlerResult, ok, scheduledFunction } from '../lib/functions/define';
import type { Logger } from '../lib/process/logger';
import type { StorageWatch } from '../lib/ops/storage-watch';

/** What housekeeping needs. */
export interface HousekeepingDeps {
  history: Pick<ServiceStores['history'], 'purgeHistory' | 'checkpoint'>;
  clock: () => Date;
  settings: { HistoryRetentionDays: number };
  log: Logger;
  /** The alarm journal: alarms cleared before the cutoff go with the history. */
  alarms?: { purgeClearedBefore(cutoff: string): Promise<number> };
  /** 'Stopping' ends a purge between two chunks (the rest waits for the next run). */
  state?: () => 'Running' | 'Stopping';
  /** The disk's watch: the hourly line of how many days of history fit (the size bound itself is handlers/history-bound.ts). */
  storageWatch?: Pick<StorageWatch, 'logProjection'>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows of each history table deleted per transaction (db/history-purge.ts says why). */
export { PURGE_CHUNK_ROWS };

/** How long the hourly checkpoint may wait for readers (an operator's sqlite3, a backup) before it gives up. */
const CHECKPOINT_WAIT_MS = 100;

/** Scheduled: purge delivered history older than the retention in short chunks, then checkpoint and truncate the WAL. */
export async function housekeeping(deps: HousekeepingDeps): Promise<HandlerResult> {
  const cutoff = new Date(deps.clock().getTime() - deps.settings.HistoryRetentionDays * DAY_MS).toISOString();
  const purge = await purgeInChunks(deps.history, cutoff, () => deps.state?.() === 'Stopping');
  const { chunks, ms } = purge;
  // The alarm journal goes with the history (its rows count among the purged).
  const purged = purge.purged + ((await deps.alarms?.purgeClearedBefore(cutoff)) ?? 0);
  // Between transactions, waiting for readers only briefly: the writer commits nothing meanwhile.
  const checkpoint = await deps.history.checkpoint('TRUNCATE', CHECKPOINT_WAIT_MS);
  const result = { PurgedHistoryRows: purged, Chunks: chunks, PurgeMs: ms, Cutoff: cutoff, Checkpoint: checkpoint };
  deps.log.info(result, `housekeeping: purged ${purged} history rows delivered before ${cutoff}`);
  deps.storageWatch?.logProjection('hourly');
  return ok(result);
}

export const fn = scheduledFunction(housekeeping);
