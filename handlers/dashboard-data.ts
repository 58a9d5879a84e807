// GET /dashboard/data: what the dashboard page (GET /dashboard) shows, in one answer per refresh.
import type { DestinationBoardReads } from '../db/destination-board-store';
import type { HistoryReads } from '../db/history-store';
import { type HandlerResult, httpFunction, ok } from '../lib/functions/define';
import type { LastHour } from '../lib/ops/last-hour';
import { perQueue } from '../lib/ops/last-hour-reading';
import type { DecisionMeter } from '../lib/ops/latency';
import type { Metrics } from '../lib/ops/metrics';
import type { Config } from '../lib/process/config';
import { type StatusDeps, statusOf } from './status';

/** What the dashboard's feed needs: the status, the metrics' counters, the latest events, the board, the last hour. */
export interface DashboardDeps extends StatusDeps {
  metrics: Metrics;
  decisions: DecisionMeter;
  history: HistoryReads;
  board: DestinationBoardReads;
  lastHour: LastHour;
  settings: Pick<Config, 'ChartSampleSeconds' | 'LateDecisionMs'>;
}

const LATEST_DELIVERIES = 12;
/** The window of the page's "Message rates": steady, and long enough to say something of the last minutes. */
const RATES_OVER_SECONDS = 60;

/**
 * The status, running totals, message rates over the last minute (from the last hour's samples),
 * the link's latest telegrams, the latest decisions (REQUEST to assignment, ms), the latest
 * deliveries, the destinations board and the last hour's samples.
 */
export async function getDashboardData(deps: DashboardDeps): Promise<HandlerResult> {
  const status = await statusOf(deps);
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
    // A REQUEST's history row keeps its induct location where the others keep their destination.
    Deliveries: deps.history.latest(LATEST_DELIVERIES).map(({ Destination, ...d }) => ({
      ...d,
      InductLocation: d.Type === 'REQUEST' ? Destination : null,
      Destination: d.Type === 'REQUEST' ? null : Destination,
    })),
    Rates: deps.lastHour.rates(RATES_OVER_SECONDS),
    Board: deps.board.board(),
    LastHour: {
      SampleSeconds: deps.settings.ChartSampleSeconds,
      LateDecisionMs: deps.settings.LateDecisionMs,
      Samples: deps.lastHour.samples(),
    },
  });
}

export const fn = httpFunction(getDashboardData, {
  // The page's own feed: it ships with the page and may change with it; the API for programs is /status, /metrics and /items.
  undocumented: true,
  notes: ["The dashboard page's feed (docs/operations.md). With ApiKeys set, send X-API-Key."],
  responses: () => ({}),
  event: () => ({}),
});
