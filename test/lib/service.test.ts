// createService on a temporary home with a real SQLite file, as lib/main.ts builds it: test mode
// (its own database, emptied and seeded from the replay file at every start, no sorter), live mode
// (its own database kept across restarts, the link to the configured sorter and its session),
// drain, and a close that finishes the writes given before it.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { defaultMigrationsDir, openReader } from '../../db/connection';
import { readMigrations } from '../../db/migrate';
import { validateConfig } from '../../lib/process/config';
import { type Service, createService } from '../../lib/service';
import { csv, removeHome, requestRow, scanRow, tempHome, verifyRow } from '../helpers/home';
import { capturingLogger } from '../helpers/log';
import { freePort } from '../helpers/net';
import { publish } from '../helpers/service';
import { induct } from '../helpers/messages';
import { until } from '../helpers/until';

let home: string;
let running: Service | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  removeHome(home);
});

/** Start the service on `home` with `config` (validated as config.json would be); logs captured. The link too, unless `link` is false. */
async function start(config: object, link = true) {
  const { log, lines } = capturingLogger();
  running = await createService({ home, config: validateConfig({ LogLevel: 'info', ...config }), log, version: '1.2.3-test' });
  if (link) running.startLink();
  return { service: running, lines };
}
const trackIds = (service: Service, queue = 'sortation') =>
  service.db.prepare(`SELECT track_id FROM ${queue}_queue ORDER BY id`).pluck().all();

describe('createService in test mode', () => {
  it('seeds its own database from the replay file, and again from it alone at the next start', async () => {
    home = tempHome({ 'Service_PLC.csv': csv(requestRow('0000001'), verifyRow('0000001'), scanRow('D001')) });
    const first = await start({ TestMode: true });
    expect(first.service.databaseFile).toBe(path.join(home, 'data/sorter-test.db'));
    expect(first.service.deps.replay).toEqual({ File: 'Service_PLC.csv', RowsLoaded: 3, RowsSkipped: 0, Error: null });
    expect(trackIds(first.service)).toEqual(['0000001', '0000001']);
    expect(first.service.db.prepare('SELECT destination FROM destination_queue').pluck().all()).toEqual(['D001']);
    await publish(first.service, [induct('EXTRA')]);
    await first.service.close();

    const second = await start({ TestMode: true });
    expect(trackIds(second.service)).toEqual(['0000001', '0000001']);
    expect(fs.existsSync(path.join(home, 'data/sorter.db'))).toBe(false); // the live database is not touched
  });

  it('has no sorter link (nothing connected, nothing sent), and knows its schema and version', async () => {
    home = tempHome({ 'Service_PLC.csv': csv(requestRow('0000001')) });
    const { service } = await start({ TestMode: true, Sorter: { Port: await freePort() } });
    const status = service.deps.link.status();
    expect(status).toMatchObject({ Connected: false, Address: null, Since: null, TelegramsOut: 0, ConnectAttemptsFailed: 0 });
    expect(service.deps.link.offer({ id: 1 } as never)).toBe('Queued');
    const known = readMigrations(defaultMigrationsDir).length;
    expect(service.deps.schema).toEqual({ applied: known, known });
    expect(service.deps.version).toBe('1.2.3-test');
  });

  it('with no replay file: empty queues and a warning that says so', async () => {
    home = tempHome();
    const { service, lines } = await start({ TestMode: true });
    expect(service.deps.replay).toEqual({ File: null, RowsLoaded: 0, RowsSkipped: 0, Error: null });
    expect(trackIds(service)).toEqual([]);
    expect(lines.some((l) => l.level === 40 && /no Service_PLC\.csv or Service_PLC\.log/.test(l.msg))).toBe(true);
  });
});

describe('createService in live mode', () => {
  it('keeps its database across restarts, and links to the configured sorter with its session stored', async () => {
    home = tempHome();
    const port = await freePort(); // nobody listens: the link keeps trying
    const first = await start({ TestMode: false, Sorter: { Host: '127.0.0.1', Port: port, ReconnectMaxMs: 100 } });
    expect(first.service.databaseFile).toBe(path.join(home, 'data/sorter.db'));
    expect(first.service.deps.replay).toBeNull();
    expect(first.service.deps.link.status()).toMatchObject({ Connected: false, Address: `127.0.0.1:${port}` });
    await publish(first.service, [induct('KEPT')]);
    const epoch = () => running!.db.prepare("SELECT our_epoch FROM link_state WHERE peer = 'PLC01'").pluck().get();
    const ours = epoch();
    expect(ours).toEqual(expect.any(String));
    await first.service.close();

    const second = await start({ TestMode: false, Sorter: { Host: '127.0.0.1', Port: port, ReconnectMaxMs: 100 } });
    expect(trackIds(second.service)).toEqual(['KEPT']);
    expect(epoch()).toBe(ours); // the same session: the sorter's numbering of our telegrams goes on
  });

  it('connects to the sorter only when told to start the link (lib/main.ts: once the HTTP server listens), and once', async () => {
    home = tempHome();
    const connections: net.Socket[] = [];
    const sorter = net.createServer((socket) => connections.push(socket));
    await new Promise<void>((resolve) => sorter.listen(0, '127.0.0.1', resolve));
    try {
      const port = (sorter.address() as net.AddressInfo).port;
      const { service } = await start({ TestMode: false, Sorter: { Host: '127.0.0.1', Port: port } }, false);
      await new Promise((r) => setTimeout(r, 300));
      expect(connections).toHaveLength(0);
      service.startLink();
      service.startLink();
      await until(() => connections.length > 0, 5000, 'the link connected');
      await new Promise((r) => setTimeout(r, 300));
      expect(connections).toHaveLength(1);
      expect(service.deps.link.status()).toMatchObject({ Connected: true });
    } finally {
      for (const c of connections) c.destroy();
      await new Promise((r) => sorter.close(r));
    }
  });
});

describe('the running service', () => {
  it('drain: answers the waiting polls at once and takes no new ones; the state says Stopping', async () => {
    home = tempHome();
    const { service } = await start({ TestMode: true });
    expect(service.deps.state()).toBe('Running');
    const waiting = service.deps.dispatchers.sortation.take(10_000);
    const started = Date.now();
    service.drain();
    expect(await waiting).toBeNull();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(service.deps.state()).toBe('Stopping');
    await publish(service, [induct('AFTER')]);
    expect(await service.deps.dispatchers.destination.take(10_000)).toBeNull();
    expect(await service.deps.dispatchers.sortation.take(0)).toBeNull();
  });

  it('close: the writes given before it are committed, then the database is closed', async () => {
    home = tempHome();
    const { service } = await start({ TestMode: false, Sorter: { Port: await freePort() } });
    const given = publish(service, [induct('LAST')]);
    running = undefined;
    await service.close();
    expect(await given).toHaveLength(1);
    expect(service.db.open).toBe(false);
    await expect(service.writer.run('enqueue', [[induct('LATE')], 'T'])).rejects.toThrow(/closing/);
    const db = openReader(service.databaseFile);
    expect(db.prepare('SELECT track_id FROM sortation_queue').pluck().all()).toEqual(['LAST']);
    db.close();
  });
});
