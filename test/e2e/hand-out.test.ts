// Handed out before the commit (HandOutBeforeCommit; docs/queue-semantics.md): the service as a
// child process, the emulator's PLC link over real TCP, a WCS long-polling over HTTP. An operator's
// write lock on the database file holds the commit back for as long as the test wants, so what
// the WCS and the sorter each see before the commit is not a matter of timing.
import path from 'node:path';
import { PlcLink } from '../../emulator/plc-link';
import Database from '../../db/sqlite';
import { encodeData } from '../../bench/v1-codec';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';

jest.setTimeout(60_000);

const request = (track: string) =>
  encodeData('REQU', {
    MessageCode: 210,
    TrackID: track,
    Barcode: `BC${track}`,
    InductLocation: 'IND01',
    RecirculationCount: 0,
    Length: 100,
    Width: 50,
    Height: 20,
    Weight: 1.5,
  });

describe('a message handed out before its commit', () => {
  let home = '';
  let plc: PlcLink | undefined;
  let svc: ServiceProcess | undefined;
  let lock: InstanceType<typeof Database> | undefined;
  afterEach(async () => {
    if (lock?.inTransaction) lock.exec('ROLLBACK');
    lock?.close();
    await svc?.stop('SIGKILL').catch(() => {});
    await plc?.close();
    removeHome(home);
    svc = plc = lock = undefined;
  });

  async function start(config: object = {}) {
    if (!plc) {
      // The sorter resends what is unacknowledged only after a reconnect here, never on a timer.
      plc = new PlcLink({ port: 0, ackTimeoutMs: 60_000, onData: () => {} });
      home = tempHome({
        'config.json': {
          TestMode: false,
          Port: 0,
          Host: '127.0.0.1',
          Sorter: { Host: '127.0.0.1', Port: await plc.listen(), ReconnectMaxMs: 200 },
          ...config,
        },
      });
    }
    svc = await startServiceProcess(home);
    await until(() => plc!.connected, 10_000);
    return svc;
  }

  /** An operator's sqlite3 holding the write lock: the service can read, and commit nothing. */
  function holdWriteLock() {
    lock = new Database(path.join(home, 'data/sorter.db'));
    lock.exec('BEGIN IMMEDIATE');
  }

  const poll = (base: string) => fetch(`${base}/sortation?timeOut=10`);
  const queued = () => new Database(path.join(home, 'data/sorter.db'), { readonly: true });

  it('a waiting WCS gets the REQUEST while its commit waits; the sorter gets its ACK only once it is committed', async () => {
    const { base } = await start();
    holdWriteLock();
    const waiting = poll(base);
    plc!.sendData('REQU', request('0000001'));
    const res = await waiting;
    expect(res.status).toBe(210); // the spec answers a REQUEST with its message code
    expect(await res.json()).toMatchObject({ Type: 'REQUEST', TrackID: '0000001' });
    expect(res.headers.get('x-delivery-attempt')).toBe('1');
    const id = Number(res.headers.get('x-message-id'));
    // Not committed, so not acknowledged: the sorter would send it again.
    const db = queued();
    expect(db.prepare('SELECT count(*) FROM sortation_queue').pluck().get()).toBe(0);
    expect(plc!.unacknowledged).toBe(1);
    lock!.exec('ROLLBACK');
    await until(() => plc!.unacknowledged === 0, 10_000);
    // Committed under the id it was handed out with; proven read by the next request, and removed.
    expect(
      db
        .prepare(
          "SELECT id FROM sortation_queue WHERE track_id = '0000001' UNION SELECT message_id FROM delivered_history WHERE track_id = '0000001'",
        )
        .pluck()
        .all(),
    ).toEqual([id]);
    db.close();
  });

  it('a crash before the commit: the sorter sends the telegram again, and the WCS gets it a second time, marked X-Delivery-Attempt: 2', async () => {
    const first = await start();
    holdWriteLock();
    const waiting = poll(first.base);
    plc!.sendData('REQU', request('0000002'));
    const res = await waiting;
    expect(await res.json()).toMatchObject({ TrackID: '0000002' });
    expect(plc!.unacknowledged).toBe(1);
    await first.stop('SIGKILL');
    lock!.exec('ROLLBACK');
    // Restarted: the sorter resends the telegram on the new connection, before its SYNE.
    const second = await start();
    const again = await poll(second.base);
    expect(again.status).toBe(210);
    expect(await again.json()).toMatchObject({ Type: 'REQUEST', TrackID: '0000002' });
    expect(again.headers.get('x-delivery-attempt')).toBe('2');
    await until(() => plc!.unacknowledged === 0, 10_000);
    // What comes after the resend is new, not marked.
    plc!.sendData('REQU', request('0000003'));
    const next = await poll(second.base);
    expect(await next.json()).toMatchObject({ TrackID: '0000003' });
    expect(next.headers.get('x-delivery-attempt')).toBe('1');
  });

  it('after a clean stop, what the sorter resends on reconnecting is not marked: the stop committed everything it had handed out', async () => {
    const first = await start();
    await first.stop('SIGTERM');
    plc!.sendData('REQU', request('0000007')); // while the service is down: unacknowledged, sent on the next connection
    const second = await start();
    const res = await poll(second.base);
    expect(await res.json()).toMatchObject({ TrackID: '0000007' });
    expect(res.headers.get('x-delivery-attempt')).toBe('1');
    await until(() => plc!.unacknowledged === 0, 10_000);
  });

  it('while a commit is held up (the lock held on), what the sorter sends next is handed out only once committed', async () => {
    const { base } = await start();
    holdWriteLock();
    const waiting = poll(base);
    plc!.sendData('REQU', request('0000005'));
    expect(await (await waiting).json()).toMatchObject({ TrackID: '0000005' }); // the writer was idle: at once
    await new Promise((r) => setTimeout(r, 500)); // its commit has waited for the lock for a while now
    const next = poll(base);
    plc!.sendData('REQU', request('0000006'));
    const early = await Promise.race([next.then(() => 'handed out'), new Promise((r) => setTimeout(() => r('still waiting'), 1000))]);
    expect(early).toBe('still waiting'); // its WCS could not get an answer committed either
    lock!.exec('ROLLBACK');
    const res = await next;
    expect(await res.json()).toMatchObject({ TrackID: '0000006' });
    expect(res.headers.get('x-delivery-attempt')).toBe('1');
    await until(() => plc!.unacknowledged === 0, 10_000);
  });

  it('HandOutBeforeCommit false: nothing is handed out before its commit', async () => {
    const { base } = await start({ HandOutBeforeCommit: false });
    holdWriteLock();
    const waiting = poll(base);
    plc!.sendData('REQU', request('0000004'));
    const early = await Promise.race([waiting.then(() => 'handed out'), new Promise((r) => setTimeout(() => r('still waiting'), 1000))]);
    expect(early).toBe('still waiting');
    lock!.exec('ROLLBACK');
    const res = await waiting;
    expect(await res.json()).toMatchObject({ TrackID: '0000004' });
    await until(() => plc!.unacknowledged === 0, 10_000);
  });
});
