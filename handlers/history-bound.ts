// The history's size bound, looked at every few seconds: past it, the oldest history goes first,
// in the same short chunks as the hourly purge by age.
import { purgeInChunks } from '../db/history-purge';
import type { ServiceStores } from '../db/service-stores';
import { scheduledFunction } from '../lib/functions/define';
import { type HandlerResult, ok } from '../lib/functions/results';
import type { StorageWatch } from '../lib/ops/storage-watch';

/** What the size bound needs. */
export interface HistoryBoundDeps {
  history: Pick<ServiceStores['history'], 'purgeDeliveredBefore'>;
  storageWatch: Pick<StorageWatch, 'look' | 'cut'>;
  /** 'Stopping' ends a cut between two chunks (the next look goes on). */
  state?: () => 'Running' | 'Stopping';
}

/** Scheduled: measure the database, its WAL and the traffic log; past the bound, purge the oldest history down to below it. */
export async function historyBound(deps: HistoryBoundDeps): Promise<HandlerResult> {
  const look = deps.storageWatch.look();
  if (look.cutoff === null) return ok({ Cut: false, FilesBytes: look.bound.filesBytes, BoundBytes: look.bound.boundBytes });
  const done = await purgeInChunks(deps.history, look.cutoff, () => deps.state?.() === 'Stopping');
  deps.storageWatch.cut(done, look.cutoff, look);
  return ok({ Cut: true, PurgedHistoryRows: done.purged, Chunks: done.chunks, PurgeMs: done.ms, Cutoff: look.cutoff, FilesBytes: look.bound.filesBytes, BoundBytes: look.bound.boundBytes });
}

export const fn = scheduledFunction(historyBound);
