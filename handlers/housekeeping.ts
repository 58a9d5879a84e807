import type { HistoryStore } from '../db/history-store';
import type { Logger } from '../lib/logger';
import { type HandlerResult, ok } from '../lib/results';

/** What housekeeping needs. */
export interface HousekeepingDeps {
  history: HistoryStore;
  clock: () => Date;
  settings: { HistoryRetentionDays: number };
  log: Logger;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Scheduled: purge delivered history older than the retention, then checkpoint and truncate the WAL. */
export function housekeeping(deps: HousekeepingDeps): HandlerResult {
  const cutoff = new Date(deps.clock().getTime() - deps.settings.HistoryRetentionDays * DAY_MS).toISOString();
  const purged = deps.history.purgeDeliveredBefore(cutoff);
  const checkpoint = deps.history.checkpoint();
  const result = { PurgedHistoryRows: purged, Cutoff: cutoff, Checkpoint: checkpoint };
  deps.log.info(result, `housekeeping: purged ${purged} history rows delivered before ${cutoff}`);
  return ok(result);
}
