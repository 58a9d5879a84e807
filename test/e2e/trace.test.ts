// "What happened to item X" with real processes: the emulator sorts items through the service
// and the reference client; the service answers GET /items/{TrackID}, and the command line
// (npm run trace, reading the database read-only while the service runs) says the same.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { type Reply, call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { itWhen, missingCommands } from '../helpers/tools';
import { nth } from '../helpers/nth';

jest.setTimeout(60_000);
const TRACE = path.resolve(__dirname, '../../dist/lib/ops/trace-cli.js');

describe('item trace: a sorted item, REQUEST, handed to the client, assignment acknowledged by the sorter, VERIFY at that destination', () => {
  let home: string;
  let svc: ServiceProcess | undefined;
  let trackId: string;
  let destination: string;
  let api: Reply;
  beforeAll(async () => {
    const emu = await startEmulator([
      '--port',
      '0',
      '--rate',
      '20',
      '--seed',
      '5',
      '--duration',
      '3',
      '--capacity',
      '100000',
      '--heartbeat-ms',
      '300',
      '--ack-timeout-ms',
      '300',
    ]);
    home = tempHome({
      'config.json': { TestMode: false, Port: 0, Host: '127.0.0.1', Sorter: { Host: '127.0.0.1', Port: emu.port, HeartbeatMs: 300 } },
    });
    svc = await startServiceProcess(home);
    const client = runWcsClient({ base: svc.base, loops: 2, timeOut: 1 });
    await emu.stats;
    const wcs = await client.stop();
    [trackId, destination] = nth([...wcs.verified.entries()], 0);
    api = await call(svc.base, 'GET', `/items/${encodeURIComponent(trackId)}`);
  });
  const names = () => api.json.Events.map((e: { Event: string }) => e.Event);
  afterAll(async () => {
    if (svc) expect(await svc.stop()).toBe(0);
    removeHome(home);
  });

  it('GET /items/{TrackID}', () => {
    const res = api;
    expect(res.status).toBe(200);
    expect(names()).toEqual([
      'RequestReceived',
      'RequestDelivered',
      'AssignmentPosted',
      'AssignmentAcknowledged',
      'VerifyReceived',
      'VerifyDelivered',
    ]);
    expect(res.json.Events[2]).toMatchObject({ Destination: destination, Client: '127.0.0.1' });
    expect(res.json.Events[4]).toMatchObject({ Destination: destination });
  });

  it('the command line says the same while the service runs', () => {
    const text = execFileSync(process.execPath, [TRACE, trackId], { env: { ...process.env, SORTER_HOME: home }, encoding: 'utf8' });
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[1]),
    ).toEqual(names());
    expect(text).toContain(`assignment to ${destination} acknowledged by the sorter`);
    const json = JSON.parse(
      execFileSync(process.execPath, [TRACE, trackId, '--json'], { env: { ...process.env, SORTER_HOME: home }, encoding: 'utf8' }),
    );
    expect(json).toEqual(api.json);
  });

  itWhen(missingCommands({ sqlite3: 'apt-get install sqlite3' }), 'item trace: the sqlite3 equivalent')(
    'the sqlite3 equivalent from docs/operations.md',
    () => {
      const row = execFileSync(
        'sqlite3',
        ['-readonly', path.join(home, 'data/sorter.db'), `SELECT destination, fate FROM outbox_history WHERE track_id = '${trackId}'`],
        { encoding: 'utf8' },
      );
      expect(row.trim()).toBe(`${destination}|Acknowledged`);
    },
  );
});
