// A full disk under load: the service home (database, WAL, traffic log) on a small tmpfs that a
// filler file fills up mid-run, then frees. The service must say so (log, /status), refuse what
// it cannot store (503 to the WCS, NAK 04 to the sorter, which sends it again), never crash,
// lose nothing it acknowledged, and recover by itself once space is back.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../../db/sqlite';
import { runWcsClient } from '../../../examples/wcs-client';
import { startEmulator } from '../../helpers/emulator';
import { call } from '../../helpers/http';
import { type ServiceProcess, startServiceProcess } from '../../helpers/process';
import { TrafficLogWriter, parseTrafficLine } from '../../../lib/link/traffic-log';
import { report } from './scale';
import { until } from '../../helpers/until';
import { describeWhen, missingTmpfsMount } from '../../helpers/tools';

jest.setTimeout(120_000);
const freeOn = (dir: string) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};
/** What takes the space on the test's disk (KB), and what is free, for the report. */
const usage = (dir: string) => {
  const files: Record<string, number> = {};
  for (const f of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const st = fs.statSync(path.join(dir, f));
    if (st.isFile()) files[f] = Math.round(st.blocks / 2);
  }
  return { ...files, free_kb: Math.round(freeOn(dir) / 1024) };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWhen(missingTmpfsMount(), 'a full disk')('a full disk', () => {
  let mnt: string;
  let svc: ServiceProcess | undefined;
  beforeAll(() => {
    // A file system of its own, so that filling it touches nothing else (root, as in CI).
    mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-fulldisk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
  });
  afterAll(async () => {
    if (svc && svc.proc.exitCode === null) await svc.stop();
    execFileSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });

  it('under 30 items/s: a clear state and error, 503s and NAKs while full, no crash, nothing acknowledged lost, recovery by itself', async () => {
    const emu = await startEmulator([
      '--port',
      '0',
      '--rate',
      '30',
      '--seed',
      '7',
      '--duration',
      '20',
      '--capacity',
      '100000',
      '--max-recirculations',
      '50',
      '--heartbeat-ms',
      '300',
      '--ack-timeout-ms',
      '300',
    ]);
    // The history's size bound set beyond the disk and no reserve kept free: what a disk that does
    // fill does (test/e2e/history-bound.test.ts has the bound that keeps it from filling).
    fs.writeFileSync(
      path.join(mnt, 'config.json'),
      JSON.stringify({
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        HistoryMaxBytes: 1073741824,
        HistoryKeepFreeShare: 0,
        Sorter: { Host: '127.0.0.1', Port: emu.port, HeartbeatMs: 300, AckTimeoutMs: 300, TrafficLogMinFreeBytes: 2 * 1048576 },
      }),
    );
    svc = await startServiceProcess(mnt);
    const client = runWcsClient({ base: svc.base, loops: 2, timeOut: 1 });
    await sleep(4000);

    const beforeFill = usage(mnt);
    // Fill every free byte.
    const filler = path.join(mnt, 'filler');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd stops with "No space left on device": that is the point
    }
    let failing: Record<string, unknown> | undefined;
    await until(
      async () => {
        const s = (await call(svc!.base, 'GET', '/status')).json;
        if (s.Storage.State === 'Failing') failing = s.Storage;
        return failing !== undefined;
      },
      15_000,
      '/status shows the storage failing',
      100,
    );
    const t0 = Date.now();
    const whileFull = await call(svc.base, 'GET', '/status');
    const statusMs = Date.now() - t0;
    // POSTs for items the sorter does not know: each answer must be honest (200 only once committed).
    const posts: Array<{ status: number; message?: string }> = [];
    for (let i = 0; i < 10; i++) {
      const r = await call(svc.base, 'POST', '/sortation', { TrackID: `FULL${i}`, Destination: 'D1' });
      posts.push({ status: r.status, message: r.json?.message });
      await sleep(150);
    }
    const duringNaks = whileFull.json.Sorter.NaksSent;

    // Free the space: everything proceeds by itself.
    fs.rmSync(filler);
    const afterFree = usage(mnt);
    await until(
      async () => (await call(svc!.base, 'GET', '/status')).json.Storage.State === 'Ok',
      15_000,
      '/status shows the storage Ok again',
      100,
    );
    const recovered = (await call(svc.base, 'GET', '/status')).json; // before the emulator ends (and closes the link)
    const emuStats = await emu.stats;
    await sleep(1500);
    const wcs = await client.stop();
    const status = (await call(svc.base, 'GET', '/status')).json;
    const logged = svc.logs.filter((l) => Number(l.level) >= 50 && /SQLITE_FULL|full|ENOSPC/i.test(JSON.stringify(l)));

    const db = new Database(path.join(mnt, 'data/sorter.db'), { readonly: true });
    const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const verifies =
      n("SELECT count(*) AS n FROM delivered_history WHERE type = 'VERIFY'") +
      n("SELECT count(*) AS n FROM sortation_queue WHERE type = 'VERIFY'");
    const requests =
      n("SELECT count(*) AS n FROM delivered_history WHERE type = 'REQUEST'") +
      n("SELECT count(*) AS n FROM sortation_queue WHERE type = 'REQUEST'");
    const scans = n("SELECT count(*) AS n FROM delivered_history WHERE type = 'SCAN'") + n('SELECT count(*) AS n FROM destination_queue');
    const distinctVerifies = n(
      "SELECT count(DISTINCT track_id) AS n FROM (SELECT track_id FROM delivered_history WHERE type = 'VERIFY' UNION ALL SELECT track_id FROM sortation_queue WHERE type = 'VERIFY')",
    );
    const link = db.prepare('SELECT peer, last_seq_in FROM link_state').all();
    db.close();
    const naks = svc.logs
      .filter((l) => /NAK sent/.test(String(l.msg)))
      .slice(-3)
      .map((l) => `${l.seq} ${l.why} (+${l.repeatedSinceLastLine ?? 0})`);
    // The distinct errors and warnings the service logged, with counts (for a failing run).
    const distinct: Record<string, number> = {};
    for (const l of svc.logs.filter((x) => Number(x.level) >= 40)) {
      const key = `${l.msg} ${(l.err as { message?: string } | undefined)?.message ?? ''}`.replace(/\d+/g, 'N').slice(0, 160);
      distinct[key] = (distinct[key] ?? 0) + 1;
    }
    report('full-disk', {
      logged: distinct,
      stalled_after_recovery: emuStats.unacknowledged_at_exit,
      oldest_unacknowledged: emuStats.oldest_unacknowledged_at_exit,
      link_state: link,
      last_naks: naks,
      disk: { beforeFill, afterFree, atEnd: usage(mnt) },
      inducted: emuStats.inducted,
      verifies: emuStats.verifies,
      requests: emuStats.requests,
      kept_verifies: verifies,
      kept_requests: requests,
      naks_sent: status.Sorter.NaksSent,
      naks_while_full: duringNaks,
      status_ms_while_full: statusMs,
      posts_while_full: posts.map((p) => p.status).join(','),
      last_error: failing?.LastError,
      errors_logged: logged.length,
    });

    expect(svc.proc.exitCode).toBeNull();
    expect(failing).toMatchObject({
      State: 'Failing',
      LastError: expect.stringMatching(/full|SQLITE_FULL/i),
      Failures: expect.any(Number),
      LastFailure: { At: expect.any(String), Error: expect.stringMatching(/full|SQLITE_FULL/i) },
    });
    expect(failing?.Failures).toBeGreaterThan(0);
    expect(statusMs).toBeLessThan(500);
    for (const p of posts) expect(p.status === 200 || (p.status === 503 && /nothing was written/.test(p.message ?? ''))).toBe(true);
    // Every assignment answered 200 reached the sorter, and nothing else did (no kill: no POST in flight lost its answer).
    expect(emuStats.assignments).toBe(wcs.assignments_posted + posts.filter((p) => p.status === 200).length);
    expect(logged.length).toBeGreaterThan(0);
    expect(status.Sorter.NaksSent).toBeGreaterThan(0); // NAK 04: cannot store now, send again
    expect(recovered.Sorter.ConnectionsLost).toBe(0); // the link stayed up through it all
    // Nothing acknowledged lost, nothing kept twice: every telegram the sorter saw acknowledged is
    // in the database (a few more may be, whose ACK came too late), each once.
    const produced = emuStats.requests + emuStats.verifies + emuStats.scans;
    expect(requests + verifies + scans).toBeGreaterThanOrEqual(produced - emuStats.unacknowledged_at_exit);
    expect(requests + verifies + scans).toBeLessThanOrEqual(produced);
    expect(distinctVerifies).toBe(verifies);
    expect(status.Storage.State).toBe('Ok');
    // Everything drained once space was back: the sorter has nothing left unacknowledged, so every
    // telegram it produced is kept exactly once. (Before the traffic log kept its reserve, it took
    // the freed space back at once, and in about one run in six the sorter stalled for good.)
    expect(emuStats.unacknowledged_at_exit).toBe(0);
    expect(requests + verifies + scans).toBe(produced);
    // The traffic log on the same disk stopped (a failed write, or its reserve for the database);
    // it writes again once a quarter more than its reserve is free (the test below), which after
    // this run's refill may or may not be the case.
    expect(await svc.logLine((l) => /traffic log: (cannot write|paused)/.test(String(l.msg)))).not.toEqual([]);
    if (freeOn(mnt) >= 2.5 * 1048576 + 65536) {
      await until(
        async () => svc!.logs.some((l) => /traffic log: writing .* again/.test(String(l.msg))),
        10_000,
        'the traffic log writes again',
        100,
      );
    }
  });

  it('the traffic log keeps its reserve for the database: paused below it, writing again once space is back', async () => {
    if (svc && svc.proc.exitCode === null) await svc.stop();
    for (const f of fs.readdirSync(mnt)) fs.rmSync(path.join(mnt, f), { recursive: true, force: true });
    const filler = path.join(mnt, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(Math.max(0, freeOn(mnt) - 1048576))); // 1 MB left
    const events: string[] = [];
    const file = path.join(mnt, 'reserve.log');
    const log = new TrafficLogWriter(
      file,
      { maxBytes: 1 << 20, keep: 1, minFreeBytes: 2 * 1048576 },
      {
        failed: (err) => events.push(`failed ${err.message}`),
        recovered: () => events.push('recovered'),
        reserve: (paused, _free, dropped) => events.push(paused ? 'paused' : `resumed, ${dropped} dropped`),
      },
    );
    const line = (i: number) => log.write(new Date(), 'IN', `0027PLC01 WCS01 ${String(i).padStart(6, '0')}LIFED`);
    for (let i = 0; i < 10; i++) line(i);
    await sleep(200); // the look at the free space the first line started has its answer: still short
    fs.rmSync(filler);
    await sleep(1100); // its next look at the free space
    line(10); // looks, and resumes when the answer comes
    await until(async () => events.includes('resumed, 11 dropped'), 3000, 'the log resumes', 100);
    line(11);
    await log.close();
    expect(events).toEqual(['paused', 'resumed, 11 dropped']);
    expect(
      fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => parseTrafficLine(l)?.content.slice(16, 22)),
    ).toEqual(['000011']);
    fs.rmSync(file);
  });
});
