// The scheduled expiry of REQUESTs older than MaxRequestAgeSeconds (live mode; off by default).
import type { ServiceStores } from '../db/service-stores';
import { empty, type HandlerResult, ok, scheduledFunction } from '../lib/functions/define';
import type { StoredAges } from '../lib/queue/arrivals';
import type { Logger } from '../lib/process/logger';

/** What the expiry needs. */
export interface ExpireRequestsDeps {
  testMode: boolean;
  store: Pick<ServiceStores['queues'], 'expireRequests'>;
  settings: { MaxRequestAgeSeconds: number };
  requestsRemoved: { Superseded: number; Expired: number };
  /** When each REQUEST of this run arrived, on the clock that never steps. */
  ages: Pick<StoredAges, 'olderThan'>;
  clock: () => Date;
  log: Logger;
}

/**
 * Take REQUESTs that arrived more than MaxRequestAgeSeconds ago out of the queue (history:
 * Expired): those of this run by their arrival on the clock that never steps (a step of the system
 * clock neither expires a fresh one nor keeps a stale one), those queued before the start by their
 * stored time.
 */
export async function expireRequests(deps: ExpireRequestsDeps): Promise<HandlerResult> {
  if (deps.testMode || deps.settings.MaxRequestAgeSeconds <= 0) return empty;
  const now = deps.clock();
  const older = deps.ages.olderThan('sortation', deps.settings.MaxRequestAgeSeconds * 1000, now.getTime());
  const expired = await deps.store.expireRequests(older, now.toISOString());
  if (expired > 0) {
    deps.requestsRemoved.Expired += expired;
    deps.log.info(
      { expired, upToId: older.upToId, before: older.before },
      `${expired} REQUESTs older than MaxRequestAgeSeconds taken out of the queue`,
    );
  }
  return ok({ Expired: expired, UpToId: older.upToId, Before: older.before });
}

/** Scheduled only in live mode with MaxRequestAgeSeconds set: otherwise its every-second run would do nothing. */
export const fn = scheduledFunction(
  expireRequests,
  (deps: Pick<ExpireRequestsDeps, 'testMode' | 'settings'>) => !deps.testMode && deps.settings.MaxRequestAgeSeconds > 0,
);
