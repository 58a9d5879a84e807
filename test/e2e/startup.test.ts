// What the real process says at start-up: the address it really listens on, a warning when that
// is beyond this machine with no API keys, and a new, empty home said out loud.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import Database from '../../db/sqlite';
import { removeHome, tempHome } from '../helpers/home';
import { runServiceToEnd, spawnService, startServiceProcess } from '../helpers/process';

// Each test starts the service (some twice): seconds on a busy machine, more than jest's default 5 s.
jest.setTimeout(30_000);

const messages = (logs: Array<Record<string, unknown>>) => logs.map((l) => String(l.msg));

describe('start-up', () => {
  it('names the address it listens on, and warns when that is every interface with no ApiKeys', async () => {
    const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '0.0.0.0' } });
    const open = await startServiceProcess(home);
    await new Promise((r) => setTimeout(r, 100));
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
    for (let i = 0; i < 200 && !lines.some((l) => /new, empty home/.test(l)); i++) await new Promise((r) => setTimeout(r, 25));
    proc.kill('SIGKILL');
    expect(lines.some((l) => l.includes(`the service home ${home} did not exist or was empty: starting with a new, empty home`))).toBe(
      true,
    );
    fs.rmSync(home, { recursive: true, force: true });
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
