// The scheduled expiry of REQUESTs older than MaxRequestAgeSeconds (live mode; off by default).
import type { ServiceStores } from '../db/service-stores';
import { empty, type HandlerResult, ok, scheduledFunction } from '../lib/functions/define';
import type { Logger } from '../lib/process/logger';

/** What the expiry needs. */
export interface ExpireRequestsDeps {
  testMode: boolean;
  store: Pick<ServiceStores['queues'], 'expireRequests'>;
  settings: { MaxRequestAgeSeconds: number };
  requestsRemoved: { Superseded: number; Expired: number };
  clock: () => Date;
  log: Logger;
}

/** Take REQUESTs received more than MaxRequestAgeSeconds ago out of the queue (history: Expired). */
export async function expireRequests(deps: ExpireRequestsDeps): Promise<HandlerResult> {
  if (deps.testMode || deps.settings.MaxRequestAgeSeconds <= 0) return empty;
  const now = deps.clock();
  const before = new Date(now.getTime() - deps.settings.MaxRequestAgeSeconds * 1000).toISOString();
  const expired = await deps.store.expireRequests(before, now.toISOString());
  if (expired > 0) {
    deps.requestsRemoved.Expired += expired;
    deps.log.info({ expired, before }, `${expired} REQUESTs older than MaxRequestAgeSeconds taken out of the queue`);
  }
  return ok({ Expired: expired, Before: before });
}

/** Scheduled only in live mode with MaxRequestAgeSeconds set: otherwise its every-second run would do nothing. */
export const fn = scheduledFunction(
  expireRequests,
  (deps: Pick<ExpireRequestsDeps, 'testMode' | 'settings'>) => !deps.testMode && deps.settings.MaxRequestAgeSeconds > 0,
);
