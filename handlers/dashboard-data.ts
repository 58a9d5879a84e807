// GET /dashboard/data: what the dashboard page (GET /dashboard) shows, in one answer per refresh.
import type { HistoryReads } from '../db/history-store';
import { httpFunction } from '../lib/functions/define';
import type { DecisionMeter } from '../lib/ops/latency';
import type { Metrics } from '../lib/ops/metrics';
import { type HandlerResult, ok } from '../lib/functions/results';
import { type StatusDeps, statusOf } from './status';

/** What the dashboard's feed needs: the status, the metrics' counters, the latest events. */
export interface DashboardDeps extends StatusDeps {
  metrics: Metrics;
  decisions: DecisionMeter;
  history: HistoryReads;
}

const LATEST_DELIVERIES = 12;

/** Sum a labelled counter per queue. */
async function perQueue(counter: Metrics['messagesIn']): Promise<{ sortation: number; destination: number }> {
  const totals = { sortation: 0, destination: 0 };
  for (const v of (await counter.get()).values) {
    const q = v.labels.queue;
    if (q === 'sortation' || q === 'destination') totals[q] += v.value;
  }
  return totals;
}

/**
 * The status, running totals (the page turns them into rates), the link's latest telegrams, the
 * latest decisions (REQUEST to assignment, ms) and the latest deliveries.
 */
export async function getDashboardData(deps: DashboardDeps): Promise<HandlerResult> {
  const status = statusOf(deps);
  return ok({
    At: deps.clock().toISOString(),
    Status: status,
    Totals: {
      Received: await perQueue(deps.metrics.messagesIn),
      Delivered: await perQueue(deps.metrics.handedOut),
      TelegramsIn: status.Sorter.TelegramsIn,
      TelegramsOut: status.Sorter.TelegramsOut,
    },
    Telegrams: deps.link.recentTelegrams(),
    Decisions: deps.decisions.recent.list().map((d) => ({ At: new Date(d.at).toISOString(), Ms: Math.round(d.ms * 10) / 10 })),
    Deliveries: deps.history.latest(LATEST_DELIVERIES),
  });
}

export const fn = httpFunction(getDashboardData, {
  // The page's own feed: it ships with the page and may change with it; the API for programs is /status, /metrics and /items.
  undocumented: true,
  notes: ['The dashboard page\'s feed (docs/operations.md). With ApiKeys set, send X-API-Key.'],
  responses: () => ({}),
  event: () => ({}),
});
