// The logs as an operator reads them: a sorter that cannot be reached is logged once, not at
// every retry, and its connection is logged when it comes; every HTTP request has an access line.
import net from 'node:net';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { freePort } from '../helpers/net';
import { startServiceProcess } from '../helpers/process';

jest.setTimeout(60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('logs', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('a sorter out of reach: one line for many attempts, then "connected" with the count; an access line per request', async () => {
    const sorterPort = await freePort(); // nobody listens there yet
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        AccessLog: 'all',
        Sorter: { Host: '127.0.0.1', Port: sorterPort, ReconnectMaxMs: 100 },
      },
    });
    const svc = await startServiceProcess(home);
    await sleep(2500);
    const attempts = (await call(svc.base, 'GET', '/status')).json.Sorter.ConnectAttemptsFailed;
    const unreachable = await svc.logLine((l) => /cannot reach the sorter/.test(String(l.msg)));
    expect(attempts).toBeGreaterThanOrEqual(8);
    expect(unreachable).toHaveLength(1);
    expect(unreachable[0]).toMatchObject({ level: 40, address: `127.0.0.1:${sorterPort}`, error: 'ECONNREFUSED' });

    // The sorter comes up: the connection is logged, with the attempts it took.
    const sockets: net.Socket[] = [];
    const plc = net.createServer((s) => sockets.push(s.on('error', () => {}))).listen(sorterPort, '127.0.0.1');
    for (let i = 0; i < 40 && !svc.logs.some((l) => /sorter link connected/.test(String(l.msg))); i++) await sleep(100);
    expect(svc.logs.find((l) => /sorter link connected/.test(String(l.msg)))).toMatchObject({ failedAttemptsBefore: expect.any(Number) });

    // Access lines: an error and a long poll that found nothing leave a trace.
    await call(svc.base, 'GET', '/nothing');
    await call(svc.base, 'GET', '/destination?timeOut=1');
    await svc.logLine((l) => l.access === true && l.path === '/destination');
    const access = svc.logs.filter((l) => l.access === true);
    expect(access).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: 'GET', path: '/nothing', status: 404, client: '127.0.0.1' }),
        expect.objectContaining({ method: 'GET', path: '/destination', status: 204, outcome: 'empty', ms: expect.any(Number) }),
      ]),
    );
    expect((access.find((l) => l.path === '/destination') as { ms: number }).ms).toBeGreaterThanOrEqual(900); // the wait
    for (const s of sockets) s.destroy();
    plc.close();
    expect(await svc.stop()).toBe(0);
  });

  it('by default (AccessLog errors) an error leaves an access line and a good answer does not', async () => {
    home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' } });
    const svc = await startServiceProcess(home);
    await call(svc.base, 'GET', '/nothing');
    await call(svc.base, 'GET', '/status');
    await call(svc.base, 'POST', '/sortation', {});
    // The last request's line come, the lines of those before it have come too (or never will).
    await svc.logLine((l) => l.access === true && l.path === '/sortation');
    expect(svc.logs.filter((l) => l.access === true).map((l) => `${l.method} ${l.path} ${l.status}`)).toEqual([
      'GET /nothing 404',
      'POST /sortation 400',
    ]);
    expect(await svc.stop()).toBe(0);
  });
});
