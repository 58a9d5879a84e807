// What the real process says at start-up: the address it really listens on, a warning when that
// is beyond this machine with no API keys, and a new, empty home said out loud.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import Database from '../../db/sqlite';
import { removeHome, tempHome } from '../helpers/home';
import { freePort } from '../helpers/net';
import { runServiceToEnd, spawnService, startServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';

// Each test starts the service (some twice): seconds on a busy machine, more than jest's default 5 s.
jest.setTimeout(30_000);

const messages = (logs: Array<Record<string, unknown>>) => logs.map((l) => String(l.msg));

describe('start-up', () => {
  it('names the address it listens on, and warns when that is every interface with no ApiKeys', async () => {
    const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '0.0.0.0' } });
    const open = await startServiceProcess(home);
    // Logged after the line that says where it listens.
    await open.logLine((l) => /beyond this machine, with no ApiKeys/.test(String(l.msg)));
    expect(messages(open.logs)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^listening on http:\/\/0\.0\.0\.0:\d+ \(test mode\)/),
        expect.stringMatching(/beyond this machine, with no ApiKeys/),
      ]),
    );
    await open.stop();
    fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify({ TestMode: true, Port: 0, Host: '127.0.0.1' }));
    const local = await startServiceProcess(home);
    await new Promise((r) => setTimeout(r, 100));
    expect(messages(local.logs).some((m) => /no ApiKeys/.test(m))).toBe(false);
    expect(messages(local.logs)).toEqual(expect.arrayContaining([expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+/)]));
    expect(messages(local.logs).some((m) => /new, empty home/.test(m))).toBe(false);
    await local.stop();
    removeHome(home);
  });

  it('logs the page size of its database, and how to convert one made with 4,096-byte pages', async () => {
    const home = tempHome({ 'config.json': { TestMode: false, Port: 0, Host: '127.0.0.1', Sorter: { Host: '127.0.0.1', Port: 9 } } });
    try {
      const fresh = await startServiceProcess(home);
      await fresh.stop();
      expect(fresh.logs.find((l) => l.msg === 'queue database open')?.pageSize).toBe(512);
      expect(messages(fresh.logs).some((m) => /pages, made before/.test(m))).toBe(false);
      // A database as an earlier version made it.
      const file = path.join(home, 'data', 'sorter.db');
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
      const old = new Database(file);
      old.pragma('page_size = 4096');
      old.pragma('journal_mode = WAL');
      old.close();
      const older = await startServiceProcess(home);
      await older.stop();
      expect(older.logs.find((l) => l.msg === 'queue database open')?.pageSize).toBe(4096);
      expect(messages(older.logs)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^the queue database has 4096-byte pages, made before 512 became the default: converting it .*docs\/operations\.md/,
          ),
        ]),
      );
    } finally {
      removeHome(home);
    }
  });

  it('says so when SORTER_HOME names a folder that did not exist (a typo starts live mode with defaults)', async () => {
    const home = path.join(os.tmpdir(), `sorter-typo-${process.pid}-${Date.now()}`);
    const { proc } = spawnService(home);
    const lines: string[] = [];
    readline.createInterface({ input: proc.stdout! }).on('line', (l) => lines.push(l));
    for (let i = 0; i < 600 && !lines.some((l) => /new, empty home/.test(l)); i++) await new Promise((r) => setTimeout(r, 25)); // up to 15 s, as a start
    proc.kill('SIGKILL');
    expect(lines.some((l) => l.includes(`the service home ${home} did not exist or was empty: starting with a new, empty home`))).toBe(
      true,
    );
    fs.rmSync(home, { recursive: true, force: true });
  });
});

describe('the warm-up before the sorter link', () => {
  it('asks itself the first requests once listening (neither metered nor logged), rehearses the codec, then connects to the sorter', async () => {
    const port = await freePort();
    const keys = { wcs: 'warm-up-test-wcs-key', monitor: 'warm-up-test-monitor-key' };
    const status = () => fetch(`http://127.0.0.1:${port}/status`, { headers: { 'x-api-key': keys.monitor } });
    // The moment the link connects, the sorter asks the HTTP side: it must already answer.
    const answered: Array<number | string> = [];
    const sockets: net.Socket[] = [];
    const sorter = net.createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
      status().then(
        (r) => answered.push(r.status),
        (err: Error) => answered.push(err.message),
      );
    });
    await new Promise<void>((resolve) => sorter.listen(0, '127.0.0.1', resolve));
    const home = tempHome({
      'config.json': {
        TestMode: false,
        Port: port,
        Host: '127.0.0.1',
        LogLevel: 'debug',
        AccessLog: 'all',
        ApiKeys: [
          { Name: 'wcs', Key: keys.wcs, Role: 'wcs' },
          { Name: 'monitor', Key: keys.monitor, Role: 'monitor' },
        ],
        Sorter: { Host: '127.0.0.1', Port: (sorter.address() as net.AddressInfo).port },
      },
    });
    try {
      const svc = await startServiceProcess(home);
      await until(() => answered.length > 0, 5_000, 'the sorter connected and asked /status');
      expect(answered[0]).toBe(200);
      const warm = svc.logs.find((l) => l.msg === 'warm-up');
      expect(warm).toMatchObject({ requests: 100, answers: { 200: 20, 204: 40, 400: 40 }, error: null });
      // Before the link's first connection, and before the line that says the service is ready.
      const at = (msg: RegExp) => svc.logs.findIndex((l) => msg.test(String(l.msg)));
      await until(() => at(/^sorter link connected/) >= 0, 5_000, 'the link logged its connection');
      expect(at(/^warm-up$/)).toBeLessThan(at(/^sorter link connected/));
      expect(at(/^warm-up$/)).toBeLessThan(at(/^listening on/));
      // Each of the four kinds of telegram of layout v1, 20 times round the codec, before the link connects.
      expect(svc.logs.find((l) => l.msg === 'sorter link: codec rehearsed')).toMatchObject({ telegrams: 80 });
      expect(at(/^sorter link: codec rehearsed$/)).toBeLessThan(at(/^sorter link connected/));
      // Neither logged nor metered: the only requests on record are the sorter's and ours. fetch
      // resolved at the headers of a gzipped /status, whose body zlib writes later on libuv's pool;
      // hapi records a response once its last byte is out (seen behind under load): so waited for.
      let metrics = '';
      const scrape = async () =>
        (metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { 'x-api-key': keys.monitor } })).text());
      await until(async () => /route="\/status",method="GET",status="200"/.test(await scrape()), 5_000, "the sorter's /status metered");
      expect(metrics).not.toMatch(/method="HEAD"/);
      expect(metrics).not.toMatch(/method="POST"/);
      await svc.logLine((l) => l.access === true && l.path === '/status');
      const accessed = svc.logs.filter((l) => l.access === true).map((l) => `${l.method} ${l.path} ${l.status}`);
      expect(accessed).not.toContainEqual(expect.stringMatching(/^(HEAD|POST) /));
      expect(accessed).toContain('GET /status 200');
      await svc.stop();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => sorter.close(r));
      removeHome(home);
    }
  });
});

describe('start-up refusals', () => {
  it.each([
    [
      'an address this machine does not have',
      { TestMode: true, Port: 0, Host: '192.0.2.1' },
      /cannot listen on 192\.0\.2\.1:0 \(Host, Port in config\.json\): EADDRNOTAVAIL/,
    ],
    [
      'a database folder that cannot be created',
      { TestMode: true, Port: 0, TestDatabase: 'Service_PLC.csv/sub/test.db' },
      /cannot use the database folder .*Service_PLC\.csv\/sub \(TestDatabase in config\.json\)/,
    ],
  ])('refuses %s with one line, before seeding anything', async (_what, config, message) => {
    const home = tempHome({
      'config.json': config,
      'Service_PLC.csv':
        'Type,MessageCode,DeviceID,TrackID,Barcode,Length,Width,Height,Weight,RecircCount,DestinationStatus,LightStatus,LightColor,DestinationText,ButtonID\n',
    });
    const run = runServiceToEnd(home);
    expect(run.status).toBe(78);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
    expect(fs.existsSync(path.join(home, 'data', 'sorter-test.db'))).toBe(false);
    removeHome(home);
  });
});
