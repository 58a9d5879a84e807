// The history's size bound, looked at every few seconds: past it, the oldest history goes first,
// in the same short chunks as the hourly purge by age.
import { purgeInChunks } from '../db/history-purge';
import type { ServiceStores } from '../db/service-stores';
import { type HandlerResult, ok, scheduledFunction } from '../lib/functions/define';
import type { StorageWatch } from '../lib/ops/storage-watch';

/** What the size bound needs. */
export interface HistoryBoundDeps {
  history: Pick<ServiceStores['history'], 'purgeHistory' | 'checkpoint'>;
  storageWatch: Pick<StorageWatch, 'look' | 'cut' | 'walPastRestart'>;
  /** 'Stopping' ends a cut between two chunks (the next look goes on). */
  state?: () => 'Running' | 'Stopping';
  /** A cut is work: the event loop's delay is sampled while it runs (the look alone is not). */
  eventLoop?: { busy(): void };
}

/** How long such a start-over may wait for readers (as the checkpoint thread's): after that the WAL goes on growing, and the next look counts it. */
const WAL_RESTART_WAIT_MS = 100;

/** Scheduled: measure the database, its WAL and the traffic log; past the bound, purge the oldest history down to below it. */
export async function historyBound(deps: HistoryBoundDeps): Promise<HandlerResult> {
  const look = deps.storageWatch.look();
  if (look.cutoff === null) return ok({ Cut: false, FilesBytes: look.bound.filesBytes, BoundBytes: look.bound.boundBytes });
  deps.eventLoop?.busy();
  // Each chunk writes about as much WAL as the rows it deletes, faster than the checkpoint thread
  // looks (every second): the WAL starts over between two chunks once it holds its restart size,
  // so that a cut does not grow it past its share of the bound.
  const restart = async () => deps.storageWatch.walPastRestart() && deps.history.checkpoint('RESTART', WAL_RESTART_WAIT_MS);
  const done = await purgeInChunks(deps.history, look.cutoff, () => deps.state?.() === 'Stopping', restart);
  deps.storageWatch.cut(done, look.cutoff, look);
  return ok({
    Cut: true,
    PurgedHistoryRows: done.purged,
    Chunks: done.chunks,
    PurgeMs: done.ms,
    Cutoff: look.cutoff,
    FilesBytes: look.bound.filesBytes,
    BoundBytes: look.bound.boundBytes,
  });
}

// Light: a look every 4 s must not keep an idle service's event loop sampler running.
export const fn = scheduledFunction(historyBound, undefined, 'light');
