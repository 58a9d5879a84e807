// A reading of the running service for the last hour's samples (lib/ops/last-hour.ts): the
// counters' totals and the queues' and the link's state, every ChartSampleSeconds.
import type { Metrics } from './metrics';
import { type MetricsSources, metricsSnapshot } from './metrics-snapshot';
import type { PerQueue, Reading } from './last-hour';

/** Sum a counter labelled by queue (and type), per queue; `type` counts only that type. */
export async function perQueue(counter: Metrics['messagesIn'], type?: string): Promise<PerQueue> {
  const totals = { sortation: 0, destination: 0 };
  for (const v of (await counter.get()).values) {
    const q = v.labels.queue;
    if ((q === 'sortation' || q === 'destination') && (type === undefined || v.labels.type === type)) totals[q] += v.value;
  }
  return totals;
}

/** The totals and the state now; `testMode`: no sorter link to report. */
export async function readLastHour(sources: MetricsSources, metrics: Metrics, now: Date, testMode: boolean): Promise<Reading> {
  const snap = await metricsSnapshot(sources, now);
  const ages = [snap.queues.sortation.oldestAgeSeconds, snap.queues.destination.oldestAgeSeconds].filter((a): a is number => a !== null);
  return {
    at: now,
    requests: (await perQueue(metrics.messagesIn, 'REQUEST')).sortation,
    in: await perQueue(metrics.messagesIn),
    out: await perQueue(metrics.handedOut),
    telegramsIn: snap.link.telegramsIn,
    telegramsOut: snap.link.telegramsOut,
    // Waiting, as /status counts them: those being handed out are no longer waiting.
    depth: { sortation: snap.queues.sortation.ready, destination: snap.queues.destination.ready },
    oldestAgeSeconds: ages.length ? Math.max(...ages) : null,
    linkUp: testMode ? null : snap.link.up,
  };
}
