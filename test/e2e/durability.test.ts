// Durability with real processes: kill -9 and restarts lose nothing acknowledged.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from '../../db/sqlite';
import { createQueueStore } from '../../db/queue-store';
import type { DestinationInfoDto, InductDto } from '../../model/messages';
import { call, drain, settled } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { poll } from '../helpers/poll';
import { startServiceProcess } from '../helpers/process';
import { itWhen, missingCommands } from '../helpers/tools';
import { until } from '../helpers/until';

const run = promisify(execFile);
const induct = (n: number): InductDto => ({
  Type: 'REQUEST',
  TrackID: String(n).padStart(7, '0'),
  Barcode: `B${n}`,
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 1,
  Width: 1,
  Height: 1,
  Weight: 1,
});
const scan = (d: string): DestinationInfoDto => ({
  Type: 'SCAN',
  Destination: d,
  DestinationStatus: 'Ready',
  DestinationText: '',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: null,
});
const live = { TestMode: false, Port: 0, Host: '127.0.0.1', ExternalChangePollMs: 50 };
jest.setTimeout(30000);

describe('live mode durability', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('kill -9 loses nothing: queued messages, the outbox and the history are all there after a restart', async () => {
    home = tempHome({ 'config.json': live });
    const first = await startServiceProcess(home);
    // Another process (this test) commits sorter messages, as the sorter link will.
    const db = new Database(path.join(home, 'data/sorter.db'));
    db.pragma('busy_timeout = 5000');
    createQueueStore(db).enqueue(
      [...Array.from({ length: 50 }, (_, i) => induct(i + 1)), scan('D1'), scan('D2')],
      new Date().toISOString(),
    );
    db.close();

    const delivered = [];
    for (let i = 0; i < 10; i++) delivered.push((await call(first.base, 'GET', '/sortation?timeOut=2')).json.TrackID);
    expect(delivered).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1).padStart(7, '0')));
    for (let i = 0; i < 3; i++) {
      const ack = await call(first.base, 'POST', '/sortation', { TrackID: delivered[i], Destination: `D${i}` });
      expect(ack.json).toMatchObject({ Delivery: 'Queued' });
    }
    await settled(first.base); // the last delivery's read proven and its removal committed
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');

    const second = await startServiceProcess(home);
    expect((await call(second.base, 'GET', '/status')).json).toMatchObject({ 'Sortation Q': 40, 'Destination Q': 2, Outbox: { Depth: 3 } });
    const rest = await drain(second.base, 'sortation');
    expect(rest.map((m) => m.TrackID)).toEqual(Array.from({ length: 40 }, (_, i) => String(i + 11).padStart(7, '0')));
    expect((await drain(second.base, 'destination')).map((m) => m.Destination)).toEqual(['D1', 'D2']);
    await second.stop();

    const check = new Database(path.join(home, 'data/sorter.db'), { readonly: true });
    expect(check.prepare('SELECT track_id, destination FROM outbox ORDER BY id').all()).toEqual([
      { track_id: '0000001', destination: 'D0' },
      { track_id: '0000002', destination: 'D1' },
      { track_id: '0000003', destination: 'D2' },
    ]);
    expect(check.prepare("SELECT count(*) FROM delivered_history WHERE queue = 'sortation'").pluck().get()).toBe(50);
    check.close();
  });

  itWhen(missingCommands({ sqlite3: 'apt-get install sqlite3' }), "live mode durability: an operator's sqlite3")(
    "an operator's sqlite3 insert wakes a waiting GET within moments",
    async () => {
      home = tempHome({ 'config.json': live });
      const svc = await startServiceProcess(home);
      const file = path.join(home, 'data/sorter.db');
      // A client that closes its connection as soon as it has read the response, as curl does.
      const waiting = poll(svc.port, '/destination?timeOut=10');
      await new Promise((r) => setTimeout(r, 300));
      const inserted = Date.now();
      await run('sqlite3', [
        file,
        '.timeout 5000',
        "INSERT INTO destination_queue (message_code, destination, destination_status, light_status, light_color, button_id, received_at) VALUES (211, 'D042', 'NotReady', 'Solid', 'RED', 3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));",
      ]);
      const res = await waiting;
      if (res === 'aborted') throw new Error('the poll was not answered');
      expect(res.status).toBe(211);
      expect(JSON.parse(res.body)).toStrictEqual({
        Type: 'SCAN',
        Destination: 'D042',
        DestinationStatus: 'NotReady',
        DestinationText: '',
        LightStatus: 'Solid',
        LightColor: 'RED',
        ButtonID: 3,
        MessageCode: 211,
        BatchDoorStatus: null,
      });
      expect(Date.now() - inserted).toBeLessThan(1000);

      // The operator recipes of docs/operations.md work against the running service's file, once the delivery
      // is committed (a moment after the client's close proved the read).
      const last = async () =>
        (
          await run('sqlite3', [
            '-readonly',
            file,
            'SELECT queue, type, destination, client_address FROM delivered_history ORDER BY id DESC LIMIT 1;',
          ])
        ).stdout.trim();
      await until(async () => (await last()) !== '', 5000, 'the delivery in the history', 100);
      expect(await last()).toBe('destination|SCAN|D042|127.0.0.1');
      await svc.stop();
    },
  );
});
