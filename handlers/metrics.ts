// GET /metrics: the service's Prometheus metrics in the text exposition format.
import { type HandlerResult, httpFunction, text } from '../lib/functions/define';
import type { Metrics } from '../lib/ops/metrics';

/** What the metrics handler needs. */
export interface MetricsDeps {
  metrics: Metrics;
}

/** Every metric, read from the service at this moment. */
export async function getMetrics(deps: MetricsDeps): Promise<HandlerResult> {
  return text(await deps.metrics.registry.metrics(), deps.metrics.registry.contentType);
}

export const fn = httpFunction(getMetrics, {
  undocumented: true,
  notes: [
    'Prometheus text format; names and meanings in docs/operations.md. With ApiKeys set, send the key as X-API-Key or Authorization: Bearer.',
  ],
  responses: () => ({}),
  event: () => ({}),
});
