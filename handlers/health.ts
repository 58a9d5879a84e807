// GET /health/live and /health/ready: for a watchdog or a load balancer (manifest input `probe`).
import type { StorageStatus } from '../db/storage-status';
import { type HandlerResult, httpFunction, ok, type Responses } from '../lib/functions/define';
import { type HealthInputs, liveness, readiness } from '../lib/ops/health';
import type { SorterLink } from '../lib/link/sorter-link-status';
import { unauthorized } from '../lib/http/routes';
import { healthReport } from '../lib/http/ops-schemas';

/** What the health handler needs. */
export interface HealthDeps {
  testMode: boolean;
  clock: () => Date;
  storage: { status(): StorageStatus };
  schema: HealthInputs['schema'];
  link: SorterLink;
  eventLoop: HealthInputs['eventLoop'];
}

/** Which probe: live (the process and its event loop answer) or ready (it can do its job). */
export interface HealthEvent {
  probe: 'live' | 'ready';
}

/** 200 when no check fails (warnings included), 503 when one does. */
export function getHealth(deps: HealthDeps, event: HealthEvent): HandlerResult {
  const inputs = {
    testMode: deps.testMode,
    now: deps.clock(),
    storage: deps.storage.status(),
    schema: deps.schema,
    link: deps.link.status(),
    eventLoop: deps.eventLoop,
  };
  const report = event.probe === 'live' ? liveness(inputs) : readiness(inputs);
  return ok(report, report.status === 'fail' ? 503 : 200);
}

export const fn = httpFunction(getHealth, {
  notes: [
    "live: the process and its event loop answer (a delay over 1 s is a warning). ready: the database takes writes, its schema is this version's, and in live mode the sorter is connected.",
    'Each check is pass, warn or fail; the status is the worst of them. 200 unless a check fails, then 503. The body follows the IETF health-check draft.',
  ],
  // The liveness check only warns: answering at all is its proof.
  responses: (input): Responses =>
    input.probe === 'live'
      ? { 200: { description: 'The process answers', schema: healthReport }, 401: unauthorized }
      : {
          200: { description: 'No check fails', schema: healthReport },
          503: { description: 'A check fails (its output says why)', schema: healthReport },
          401: unauthorized,
        },
  event: (_request, input): HealthEvent => ({ probe: input.probe === 'live' ? 'live' : 'ready' }),
});
