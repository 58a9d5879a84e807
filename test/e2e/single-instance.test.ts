// One service per home: a second start by mistake changes nothing (no re-seeding, no sorter
// connection), says which process holds the home; and test mode refuses the live database.
import net from 'node:net';
import path from 'node:path';
import Database from '../../db/sqlite';
import { csv, removeHome, requestRow, tempHome } from '../helpers/home';
import { runServiceToEnd, startServiceProcess } from '../helpers/process';

// Three starts and a refused one in a test: about 5 s on a quiet machine, more on a busy one.
jest.setTimeout(30_000);
const runOnce = runServiceToEnd;

describe('a second instance on the same home', () => {
  it('test mode: refuses to start, names the running process, and does not re-seed its queues', async () => {
    const home = tempHome({
      'config.json': { TestMode: true, Port: 0 },
      'Service_PLC.csv': csv(requestRow('0000001'), requestRow('0000002')),
    });
    const first = await startServiceProcess(home);
    const taken = await fetch(`${first.base}/sortation?timeOut=0`);
    expect(((await taken.json()) as { TrackID: string }).TrackID).toBe('0000001');
    const second = runOnce(home);
    expect(second.status).toBe(75);
    expect(second.stderr).toMatch(new RegExp(`another instance of the service is running on .* \\(pid ${first.proc.pid}, started `));
    // The message taken before is not back: the second start touched nothing.
    const next = await fetch(`${first.base}/sortation?timeOut=0`);
    expect(((await next.json()) as { TrackID: string }).TrackID).toBe('0000002');
    await first.stop();
    // Once the first is gone (even by kill -9 the lock goes with it), a start works.
    const again = await startServiceProcess(home);
    await again.stop('SIGKILL');
    const afterKill = await startServiceProcess(home);
    await afterKill.stop();
    removeHome(home);
  });

  it('live mode: the second never connects to the sorter, the first keeps its link', async () => {
    let connections = 0;
    const sorter = net.createServer((s) => {
      connections += 1;
      s.on('error', () => {});
    });
    await new Promise<void>((r) => sorter.listen(0, '127.0.0.1', () => r()));
    const port = (sorter.address() as net.AddressInfo).port;
    const home = tempHome({ 'config.json': { TestMode: false, Port: 0, Sorter: { Host: '127.0.0.1', Port: port } } });
    const first = await startServiceProcess(home);
    for (let i = 0; i < 100 && connections === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(connections).toBe(1);
    expect(runOnce(home).status).toBe(75);
    await new Promise((r) => setTimeout(r, 300));
    expect(connections).toBe(1);
    await first.stop();
    sorter.close();
    removeHome(home);
  });
});

describe('test mode and the live database', () => {
  it('refuses a TestDatabase that is the live Database, and leaves the live queues alone', async () => {
    const home = tempHome({ 'config.json': { TestMode: false, Port: 0, Sorter: { Port: 1 } } });
    const live = await startServiceProcess(home);
    await live.stop();
    const db = new Database(path.join(home, 'data/sorter.db'));
    db.prepare(
      "INSERT INTO sortation_queue (message_code, type, track_id, barcode, induct_location, recirculation_count, length, width, height, weight, received_at) VALUES (210, 'REQUEST', 'LIVE1', '', 'IND01', 0, 1, 1, 1, 1, 'T')",
    ).run();
    db.close();
    const fs = await import('node:fs');
    fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify({ TestMode: true, Port: 0, TestDatabase: './data/../data/sorter.db' }));
    fs.writeFileSync(path.join(home, 'Service_PLC.csv'), csv(requestRow('REPLAY1')));
    const run = runOnce(home);
    expect(run.status).toBe(78);
    expect(run.stderr).toMatch(/"TestDatabase" must not be the live "Database"/);
    const check = new Database(path.join(home, 'data/sorter.db'), { readonly: true });
    expect(check.prepare('SELECT track_id FROM sortation_queue').pluck().all()).toEqual(['LIVE1']);
    check.close();
    removeHome(home);
  });
});
