// Test mode end to end: the service replays Service_PLC.csv / .log from its home.
import fs from 'node:fs';
import path from 'node:path';
import { call, drain } from '../helpers/http';
import { csv, removeHome, requestRow, scanRow, tempHome, verifyRow } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';

const config = { TestMode: true, Port: 0, Host: '127.0.0.1' };
const fixtureLog = fs.readFileSync(path.join(__dirname, '../fixtures/Service_PLC.log'), 'utf8');
jest.setTimeout(30000);

describe('test mode as a child process', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('replays the CSV, drains both queues in file order, and replays it again after a restart without duplicates', async () => {
    home = tempHome({
      'config.json': config,
      'Service_PLC.csv': csv(
        scanRow('D1'),
        requestRow('0004711'),
        'REQUEST,210,IND01,0004712,,,,,,BAD,,,,,',
        verifyRow('0004711'),
        scanRow('D2', 'NotReady'),
      ),
    });
    const first = await startServiceProcess(home);
    const status = (await call(first.base, 'GET', '/status')).json;
    expect(status).toMatchObject({
      'Sortation Q': 2,
      'Destination Q': 2,
      TestMode: true,
      Replay: { File: 'Service_PLC.csv', RowsLoaded: 4, RowsSkipped: 1 },
    });
    const skipped = first.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('replay row skipped'));
    expect(skipped).toMatchObject({ line: 4, column: 'RecircCount', value: 'BAD' });

    const sortation = await drain(first.base, 'sortation');
    const destination = await drain(first.base, 'destination');
    expect(sortation.map((m) => [m.Type, m.TrackID])).toEqual([
      ['REQUEST', '0004711'],
      ['VERIFY', '0004711'],
    ]);
    expect(destination.map((m) => m.Destination)).toEqual(['D1', 'D2']);
    expect((await call(first.base, 'GET', '/status')).json).toMatchObject({ 'Sortation Q': 0, 'Destination Q': 0 });
    expect(await first.stop()).toBe(0);

    const second = await startServiceProcess(home);
    expect(await drain(second.base, 'sortation')).toEqual(sortation);
    expect(await drain(second.base, 'destination')).toEqual(destination);
    await second.stop();
    // Test mode never creates or touches the live database.
    expect(fs.existsSync(path.join(home, 'data/sorter.db'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'data/sorter-test.db'))).toBe(true);
  });

  it('prefers Service_PLC.csv when both files are present', async () => {
    home = tempHome({ 'config.json': config, 'Service_PLC.csv': csv(requestRow('FROM-CSV')), 'Service_PLC.log': fixtureLog });
    const svc = await startServiceProcess(home);
    expect((await drain(svc.base, 'sortation')).map((m) => m.TrackID)).toEqual(['FROM-CSV']);
    expect(await drain(svc.base, 'destination')).toEqual([]);
    await svc.stop();
  });

  it('replays the sorter-to-service telegrams of Service_PLC.log when there is no CSV', async () => {
    home = tempHome({ 'config.json': config, 'Service_PLC.log': fixtureLog });
    const svc = await startServiceProcess(home);
    const sortation = await drain(svc.base, 'sortation');
    expect(sortation.map((m) => m.Type)).toEqual(['REQUEST', 'VERIFY']);
    expect(sortation[0]).toStrictEqual({
      Type: 'REQUEST',
      TrackID: '0004711',
      Barcode: '4006381333931',
      MessageCode: 210,
      InductLocation: 'IND01',
      RecirculationCount: 0,
      Length: 320.5,
      Width: 210,
      Height: 95,
      Weight: 1.25,
    });
    expect((await drain(svc.base, 'destination')).map((m) => [m.Destination, m.BatchDoorStatus])).toEqual([
      ['D001', null],
      ['D003', 'OPENED'],
    ]);
    expect((await call(svc.base, 'GET', '/status')).json.Replay).toMatchObject({ File: 'Service_PLC.log', RowsLoaded: 4, RowsSkipped: 0 });
    await svc.stop();
  });

  it('starts without any replay file and answers 204 after the wait', async () => {
    home = tempHome({ 'config.json': config });
    const svc = await startServiceProcess(home);
    const started = Date.now();
    const res = await call(svc.base, 'GET', '/sortation?timeOut=1');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect((await call(svc.base, 'GET', '/destination?timeOut=0')).status).toBe(204);
    expect((await call(svc.base, 'GET', '/status')).json.Replay).toEqual({ File: null, RowsLoaded: 0, RowsSkipped: 0, Error: null });
    await svc.stop();
  });

  it('still starts when the replay file cannot be used, and says why in /status', async () => {
    home = tempHome({ 'config.json': config, 'Service_PLC.csv': 'type,messagecode\nREQUEST,210\n' });
    const svc = await startServiceProcess(home);
    expect((await call(svc.base, 'GET', '/status')).json.Replay.Error).toMatch(/header must be exactly/);
    await svc.stop();
  });
});

describe('start-up and shutdown', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('refuses an invalid config.json with one message listing every problem (exit 78)', async () => {
    home = tempHome({ 'config.json': { TestMode: 'yes', Port: -1, Colour: 'blue' } });
    await expect(startServiceProcess(home)).rejects.toThrow(
      /exited \(78\)[\s\S]*"TestMode" must be a boolean[\s\S]*"Port" must be a valid port[\s\S]*"Colour" is not allowed/,
    );
  });

  it('answers a waiting long poll with 204 at once on SIGTERM and exits 0', async () => {
    home = tempHome({ 'config.json': config });
    const svc = await startServiceProcess(home);
    const waiting = call(svc.base, 'GET', '/sortation?timeOut=30');
    await until(
      async () => (await call(svc.base, 'GET', '/status')).json.WaitingClients['Sortation Q'] === 1,
      5000,
      'the long poll is waiting',
      20,
    );
    const started = Date.now();
    svc.proc.kill('SIGTERM');
    expect((await waiting).status).toBe(204);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await svc.exited).toBe(0);
  });
});
