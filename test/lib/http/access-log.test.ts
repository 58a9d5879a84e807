// Every response recorded once (lib/http/access-log.ts), on a real hapi server: the duration
// histogram by route (unknown paths under one label), empty receives and messages handed out per
// queue, and the access log lines AccessLog asks for, with a long poll's outcome.
import Hapi from '@hapi/hapi';
import { recordResponses } from '../../../lib/http/access-log';
import { Metrics } from '../../../lib/ops/metrics';
import { capturingLogger } from '../../helpers/log';

/** A server whose routes answer as a queue would, recording into fresh metrics and a captured log. */
function recorded(accessLog: 'all' | 'errors' | 'off') {
  const metrics = new Metrics(() => {
    throw new Error('no scrape in this test');
  });
  const { log, lines } = capturingLogger();
  const server = Hapi.server();
  recordResponses(server, { metrics, log, settings: { AccessLog: accessLog } });
  server.route([
    {
      method: 'GET',
      path: '/sortation',
      handler: (request, h) =>
        request.query.empty
          ? h.response().code(204)
          : (Object.assign(request.app, { handedOut: { messageId: 41, attempt: 2, type: 'VERIFY' } }), h.response({}).code(212)),
    },
    { method: 'GET', path: '/status', handler: () => ({}) },
    {
      method: 'GET',
      path: '/broken',
      handler: () => {
        throw new Error('a bug');
      },
    },
  ]);
  return { server, metrics, lines };
}
const counted = async (m: { get(): Promise<{ values: Array<{ labels: object; value: number }> }> }) =>
  (await m.get()).values.map((v) => ({ ...v.labels, value: v.value }));

describe('recordResponses', () => {
  it('counts empty receives and messages handed out per queue, and every duration by route, method and status', async () => {
    const { server, metrics } = recorded('off');
    await server.inject('/sortation?empty=1');
    await server.inject('/sortation?empty=1');
    await server.inject('/sortation');
    await server.inject('/status');
    await server.inject('/nowhere/at/all');
    await server.inject('/elsewhere');
    expect(await counted(metrics.emptyReceives)).toEqual([{ queue: 'sortation', value: 2 }]);
    expect(await counted(metrics.handedOut)).toEqual([{ queue: 'sortation', type: 'VERIFY', value: 1 }]);
    const durations = (await metrics.httpDuration.get()).values
      .filter((v) => v.metricName?.endsWith('_count'))
      .map((v) => ({ ...v.labels, value: v.value }));
    expect(durations).toEqual(
      expect.arrayContaining([
        { route: '/sortation', method: 'GET', status: '204', value: 2 },
        { route: '/sortation', method: 'GET', status: '212', value: 1 },
        { route: '/status', method: 'GET', status: '200', value: 1 },
        { route: 'unmatched', method: 'GET', status: '404', value: 2 },
      ]),
    );
    expect(durations).toHaveLength(4);
  });

  it('AccessLog errors: a line for each response of 400 and above only; a failing route is logged as an error too', async () => {
    const { server, lines } = recorded('errors');
    await server.inject('/status');
    await server.inject('/nowhere');
    await server.inject('/broken');
    const access = lines.filter((l) => l.access);
    expect(access.map((l) => l.msg.replace(/ \d+ ms$/, ''))).toEqual(['GET /nowhere 404', 'GET /broken 500']);
    expect(access[0]).toMatchObject({ method: 'GET', path: '/nowhere', status: 404, client: '127.0.0.1', ms: expect.any(Number) });
    expect(lines.find((l) => l.msg === 'request failed')).toMatchObject({ level: 50, path: '/broken', err: { message: 'a bug' } });
  });

  it("AccessLog all: every response, a long poll's with its outcome and the message it handed out; off: none", async () => {
    const all = recorded('all');
    await all.server.inject('/sortation?empty=1');
    await all.server.inject('/sortation');
    await all.server.inject('/status');
    expect(
      all.lines
        .filter((l) => l.access)
        .map((l) => ({ path: l.path, status: l.status, outcome: l.outcome, messageId: l.messageId, attempt: l.attempt })),
    ).toEqual([
      { path: '/sortation', status: 204, outcome: 'empty', messageId: undefined, attempt: undefined },
      { path: '/sortation', status: 212, outcome: 'message', messageId: 41, attempt: 2 },
      { path: '/status', status: 200, outcome: undefined, messageId: undefined, attempt: undefined },
    ]);
    const off = recorded('off');
    await off.server.inject('/nowhere');
    expect(off.lines.filter((l) => l.access)).toEqual([]);
  });
});
