// kill -9 of the service at random moments under emulator load, 20 times (SOAK: more): every
// message acknowledged to the sorter is in the database, queued or handed to the WCS, exactly
// once; every assignment acknowledged to the WCS reached the sorter; duplicates seen by the WCS
// stay within the documented crash window (a response in flight per client loop per kill, the
// deliveries the writer still held: config.json UnsyncedHoldMs, and the telegrams handed out while
// their commit waited in the commit window). Run with the default hold and again without one.
import path from 'node:path';
import Database from '../../../db/sqlite';
import { runWcsClient } from '../../../examples/wcs-client';
import { startEmulator } from '../../helpers/emulator';
import { call } from '../../helpers/http';
import { freePort } from '../../helpers/net';
import { removeHome, tempHome } from '../../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../../helpers/process';
import { HOLD_MS, WINDOW_MAX_WRITES, WINDOW_MS } from '../../../db/commit-plan';
import { coalesceMs } from '../../../db/writer';
import { SOAK, report, seed } from './scale';

const KILLS = 20 * SOAK;
const LOOPS = 2; // client loops on /sortation; the reference client adds one on /destination
const RATE = 30;
/**
 * Deliveries a kill can catch not yet committed, two an item (its REQUEST and its VERIFY): those
 * waiting on the main thread for their hand-over to the writer (up to half the commit window: a
 * VERIFY's and a SCAN's removal wait for the next POST to carry them) and those the writer holds
 * for `holdMs`.
 */
const heldAtKill = (holdMs: number) => Math.ceil((RATE * 2 * (coalesceMs(WINDOW_MS) + holdMs)) / 1000);
jest.setTimeout(240_000 * SOAK);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A small deterministic random source, from the run's seed. */
function random(s: number) {
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

describe('kill -9 at random moments under load', () => {
  let home: string;
  let svc: ServiceProcess | undefined;
  afterEach(async () => {
    if (svc && svc.proc.exitCode === null && svc.proc.signalCode === null) await svc.stop();
    svc = undefined;
    removeHome(home);
  });

  it(`${KILLS} kills while the sorter inducts ${RATE} items/s: nothing acknowledged is lost, nothing queued twice`, () =>
    soak(KILLS, HOLD_MS));
  it(`${KILLS / 2} kills with UnsyncedHoldMs 0: the repeats are only the responses in flight and the telegrams in their commit window`, () =>
    soak(KILLS / 2, 0));

  async function soak(KILLS: number, holdMs: number) {
    const rnd = random(seed);
    // Long enough for every kill and restart, then a quiet tail in which everything drains.
    const emu = await startEmulator([
      '--port',
      '0',
      '--rate',
      String(RATE),
      '--seed',
      String(seed % 1000),
      '--duration',
      String(Math.ceil(KILLS * 1.6) + 6),
      '--capacity',
      '100000',
      '--max-recirculations',
      '50',
      '--heartbeat-ms',
      '300',
      '--ack-timeout-ms',
      '300',
      // The kills go on past the induction when starts are slow (a busy machine: each restart
      // takes seconds), and the items that went round meanwhile need their passes: the drain
      // ends as soon as the sorter is empty, and waits up to a minute for that.
      '--drain-timeout',
      '60',
    ]);
    const httpPort = await freePort();
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: httpPort,
        Host: '127.0.0.1',
        UnsyncedHoldMs: holdMs,
        Sorter: { Host: '127.0.0.1', Port: emu.port, HeartbeatMs: 300, AckTimeoutMs: 300, ReconnectMaxMs: 300 },
      },
    });
    svc = await startServiceProcess(home);
    const client = runWcsClient({ base: svc.base, loops: LOOPS, timeOut: 1 });
    const kills: number[] = [];
    const starts: number[] = [];
    for (let i = 0; i < KILLS; i++) {
      const after = Math.round(300 + rnd() * 1000); // a random moment in the stream
      await sleep(after);
      await svc.stop('SIGKILL');
      kills.push(after);
      await sleep(Math.round(rnd() * 300));
      const t0 = Date.now();
      svc = await startServiceProcess(home, {}, 20_000);
      starts.push(Date.now() - t0);
    }
    const emuStats = await emu.stats;
    await sleep(1500); // the last responses and POSTs
    const wcs = await client.stop();
    const status = (await call(svc.base, 'GET', '/status')).json;

    const db = new Database(path.join(home, 'data/sorter.db'), { readonly: true });
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const kept = (type: string, queue: string) => ({
      history: count(`SELECT count(*) AS n FROM delivered_history WHERE type = '${type}'`),
      queued: count(`SELECT count(*) AS n FROM ${queue}${queue === 'sortation_queue' ? ` WHERE type = '${type}'` : ''}`), // destination_queue holds SCANs only
    });
    const verify = kept('VERIFY', 'sortation_queue');
    const request = kept('REQUEST', 'sortation_queue');
    const scan = kept('SCAN', 'destination_queue');
    const distinctVerifies = count(
      "SELECT count(DISTINCT track_id) AS n FROM (SELECT track_id FROM delivered_history WHERE type = 'VERIFY' UNION ALL SELECT track_id FROM sortation_queue WHERE type = 'VERIFY')",
    );
    const distinctRequests = count(
      "SELECT count(*) AS n FROM (SELECT DISTINCT track_id, rc FROM (SELECT track_id, body ->> '$.RecirculationCount' AS rc FROM delivered_messages WHERE type = 'REQUEST' UNION ALL SELECT track_id, recirculation_count FROM sortation_queue WHERE type = 'REQUEST'))",
    );
    const messagesTwice = count(
      'SELECT count(*) AS n FROM (SELECT queue, message_id FROM delivered_history GROUP BY queue, message_id HAVING count(*) > 1)',
    );
    db.close();
    const duplicates = wcs.duplicate_requests + wcs.duplicate_verifies;
    report('kill9', {
      seed,
      kills: KILLS,
      inducted: emuStats.inducted,
      requests: emuStats.requests,
      verifies: emuStats.verifies,
      scans: emuStats.scans,
      rejected: emuStats.rejected,
      unacknowledged_at_exit: emuStats.unacknowledged_at_exit,
      on_sorter_at_exit: emuStats.on_sorter_at_exit,
      start_ms_max: Math.max(...starts),
      assignments_posted: wcs.assignments_posted,
      assignments_received: emuStats.assignments,
      wcs_duplicates: duplicates,
      wcs_marked_redeliveries: wcs.redeliveries_seen,
      hold_ms: holdMs,
      allowed_duplicates: KILLS * (LOOPS + 1 + heldAtKill(holdMs) + WINDOW_MAX_WRITES),
    });

    // Every telegram the sorter had acknowledged is in the database once: queued or handed out.
    expect(emuStats.unacknowledged_at_exit).toBe(0);
    expect(verify.history + verify.queued).toBe(emuStats.verifies);
    expect(distinctVerifies).toBe(emuStats.verifies);
    expect(request.history + request.queued).toBe(emuStats.requests);
    expect(distinctRequests).toBe(emuStats.requests);
    expect(scan.history + scan.queued).toBe(emuStats.scans);
    expect(messagesTwice).toBe(0);
    // Every assignment acknowledged to the WCS reached the sorter; the only extra ones are POSTs
    // committed and forwarded whose 200 a kill cut off (one per loop per kill at most).
    expect(status.Outbox.Depth).toBe(0);
    expect(emuStats.assignments).toBeGreaterThanOrEqual(wcs.assignments_posted);
    expect(emuStats.assignments - wcs.assignments_posted).toBeLessThanOrEqual(KILLS * LOOPS);
    // The WCS saw each VERIFY; repeats only within the crash window: a response in flight per
    // loop per kill, the deliveries not yet committed when it came (heldAtKill), and the telegrams
    // handed out before their commit that waited in the commit window (at most WINDOW_MAX_WRITES;
    // the sorter sends them again in its resynchronisation, marked X-Delivery-Attempt 2). A POST's
    // entry no longer takes them along to its own synced commit (DurableBySorterAck), so they wait
    // out their window.
    expect(wcs.verified.size).toBe(emuStats.verifies);
    expect(duplicates).toBeLessThanOrEqual(KILLS * (LOOPS + 1 + heldAtKill(holdMs) + WINDOW_MAX_WRITES));
  }
});
