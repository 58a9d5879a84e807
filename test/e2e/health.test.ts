// Health as a watchdog sees it: the service and the emulator as processes; ready while the sorter
// is connected, 503 with the reason once it is gone, and /status says Degraded, not Running.
import { startEmulator } from '../helpers/emulator';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';

jest.setTimeout(60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('health endpoints, live mode', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('ready 200 while the sorter is connected; 503 naming the sorter once it is gone; live stays 200', async () => {
    const emu = await startEmulator(['--port', '0', '--rate', '5', '--seed', '3', '--heartbeat-ms', '300', '--ack-timeout-ms', '300']);
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        Sorter: { Host: '127.0.0.1', Port: emu.port, HeartbeatMs: 300, ReconnectMaxMs: 500 },
      },
    });
    const svc = await startServiceProcess(home);
    let ready = await call(svc.base, 'GET', '/health/ready');
    for (let i = 0; i < 50 && ready.status !== 200; i++, await sleep(100)) ready = await call(svc.base, 'GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({
      status: 'pass',
      checks: {
        'sorter:link': [{ status: 'pass' }],
        'database:writable': [{ status: 'pass' }],
        'database:migrations': [{ status: 'pass' }],
      },
    });
    expect((await call(svc.base, 'GET', '/status')).json).toMatchObject({ State: 'Running', Problems: [] });

    await emu.stop();
    for (let i = 0; i < 50 && ready.status === 200; i++, await sleep(100)) ready = await call(svc.base, 'GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.json.checks['sorter:link'][0]).toMatchObject({
      status: 'fail',
      output: expect.stringMatching(/the sorter 127\.0\.0\.1:\d+ is not connected/),
    });
    const status = (await call(svc.base, 'GET', '/status')).json;
    expect(status.State).toBe('Degraded');
    expect(status.Problems).toEqual([expect.stringMatching(/^sorter:link: the sorter .* is not connected/)]);
    const live = await call(svc.base, 'GET', '/health/live');
    expect(live.status).toBe(200);
    expect(live.json.checks['eventLoop:delay'][0]).toMatchObject({ status: 'pass', observedUnit: 'ms' });
    expect(await svc.stop()).toBe(0);
  });
});
