// The hourly housekeeping: purge old delivered history, checkpoint the WAL.
import type { ServiceStores } from '../db/service-stores';
import { scheduledFunction } from '../lib/functions';
import type { Logger } from '../lib/logger';
import { type HandlerResult, ok } from '../lib/results';

/** What housekeeping needs. */
export interface HousekeepingDeps {
  history: Pick<ServiceStores['history'], 'purgeDeliveredBefore' | 'checkpoint'>;
  clock: () => Date;
  settings: { HistoryRetentionDays: number };
  log: Logger;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Scheduled: purge delivered history older than the retention, then checkpoint and truncate the WAL. */
export async function housekeeping(deps: HousekeepingDeps): Promise<HandlerResult> {
  const cutoff = new Date(deps.clock().getTime() - deps.settings.HistoryRetentionDays * DAY_MS).toISOString();
  const purged = await deps.history.purgeDeliveredBefore(cutoff);
  const checkpoint = await deps.history.checkpoint();
  const result = { PurgedHistoryRows: purged, Cutoff: cutoff, Checkpoint: checkpoint };
  deps.log.info(result, `housekeeping: purged ${purged} history rows delivered before ${cutoff}`);
  return ok(result);
}

export const fn = scheduledFunction(housekeeping);
