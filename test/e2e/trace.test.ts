// "What happened to item X" with real processes: the emulator sorts items through the service
// and the reference client; the service answers GET /items/{TrackID}, and the command line
// (npm run trace, reading the database read-only while the service runs) says the same.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';

jest.setTimeout(60_000);
const TRACE = path.resolve(__dirname, '../../dist/lib/ops/trace-cli.js');

describe('item trace', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('a sorted item: REQUEST, handed to the client, assignment acknowledged by the sorter, VERIFY at that destination', async () => {
    const emu = await startEmulator(['--port', '0', '--rate', '20', '--seed', '5', '--duration', '3', '--capacity', '100000', '--heartbeat-ms', '300', '--ack-timeout-ms', '300']);
    home = tempHome({ 'config.json': { TestMode: false, Port: 0, Host: '127.0.0.1', Sorter: { Host: '127.0.0.1', Port: emu.port, HeartbeatMs: 300 } } });
    const svc = await startServiceProcess(home);
    const client = runWcsClient({ base: svc.base, loops: 2, timeOut: 1 });
    await emu.stats;
    const wcs = await client.stop();
    const [trackId, destination] = [...wcs.verified.entries()][0];

    const res = await call(svc.base, 'GET', `/items/${encodeURIComponent(trackId)}`);
    expect(res.status).toBe(200);
    const names = res.json.Events.map((e: { Event: string }) => e.Event);
    expect(names).toEqual(['RequestReceived', 'RequestDelivered', 'AssignmentPosted', 'AssignmentAcknowledged', 'VerifyReceived', 'VerifyDelivered']);
    expect(res.json.Events[2]).toMatchObject({ Destination: destination, Client: '127.0.0.1' });
    expect(res.json.Events[4]).toMatchObject({ Destination: destination });

    // The command line, while the service runs.
    const text = execFileSync(process.execPath, [TRACE, trackId], { env: { ...process.env, SORTER_HOME: home }, encoding: 'utf8' });
    expect(text.trim().split('\n').map((l) => l.split(/\s+/)[1])).toEqual(names);
    expect(text).toContain(`assignment to ${destination} acknowledged by the sorter`);
    const json = JSON.parse(execFileSync(process.execPath, [TRACE, trackId, '--json'], { env: { ...process.env, SORTER_HOME: home }, encoding: 'utf8' }));
    expect(json).toEqual(res.json);
    // The sqlite3 equivalent from docs/operations.md.
    const row = execFileSync('sqlite3', ['-readonly', path.join(home, 'data/sorter.db'), `SELECT destination, fate FROM outbox_history WHERE track_id = '${trackId}'`], { encoding: 'utf8' });
    expect(row.trim()).toBe(`${destination}|Acknowledged`);
    expect(await svc.stop()).toBe(0);
  });
});
