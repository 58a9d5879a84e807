// Every response, recorded once: its duration by route and status, empty receives and messages
// handed out, and (AccessLog) a log line.
import type Hapi from '@hapi/hapi';
import type { Metrics } from '../ops/metrics';
import type { Config } from '../process/config';
import type { Logger } from '../process/logger';
import { callerOf } from './auth';
import { clientAddress, handedOut } from './function-routes';
import type { WarmUpState } from './warm-up';

/** Record each response on `server` in the metrics and the access log. */
export function recordResponses(server: Hapi.Server, deps: { metrics: Metrics; log: Logger; settings: Pick<Config, 'AccessLog'> }): void {
  const { metrics, log } = deps;
  const accessLog = deps.settings.AccessLog;
  server.events.on('response', (request) => {
    // The service's own warm-up at start (warm-up.ts): not a client's request.
    if ((server.app as WarmUpState).warmUpPorts?.has(request.raw.req.socket.remotePort ?? -1)) return;
    const res = request.response as { statusCode?: number } | null;
    const status = res?.statusCode ?? request.raw.res.statusCode;
    const method = request.method.toUpperCase();
    const ms = (request.info.responded || Date.now()) - request.info.received;
    // hapi's not-found route is '/{p*}': one label for every unknown path (labels stay bounded).
    const route = request.route.path === '/{p*}' ? 'unmatched' : request.route.path;
    metrics.httpDuration.observe({ route, method, status: String(status) }, ms / 1000);
    const queue = route === '/sortation' ? 'sortation' : route === '/destination' ? 'destination' : null;
    const message = handedOut(request);
    // Every request costs about 10% CPU at 1,000 items/s (docs/performance.md): errors by default.
    if (accessLog === 'all' || (accessLog === 'errors' && status >= 400)) {
      const poll =
        queue && request.method === 'get'
          ? {
              outcome: message ? 'message' : status === 204 ? 'empty' : 'error',
              ...(message && { messageId: message.messageId, attempt: message.attempt }),
            }
          : {};
      const key = callerOf(request)?.name;
      log.info(
        { access: true, method, path: request.path, status, ms, client: clientAddress(request), ...(key && { key }), ...poll },
        `${method} ${request.path} ${status} ${ms} ms`,
      );
    }
    if (!queue) return;
    if (message) metrics.handedOut.inc({ queue, type: message.type });
    else if (request.method === 'get' && status === 204) metrics.emptyReceives.inc({ queue });
  });
  server.events.on({ name: 'request', channels: 'error' }, (request, event) =>
    log.error({ err: event.error, method: request.method, path: request.path }, 'request failed'),
  );
}
