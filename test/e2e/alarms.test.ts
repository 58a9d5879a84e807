// Each alarm raised and cleared by a real fault, with short thresholds from config.json: the
// service as its own process in live mode, the emulator as its sorter (silent, stopped, back),
// a WCS that is not there and then is, a client that never proves its reads, an operator's
// sqlite3 holding the database, a restart after kill -9. Each raise and clear is checked in
// GET /alarms (with times), /status, /metrics and the log (once each).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runWcsClient } from '../../examples/wcs-client';
import { killAtFileEnd } from '../helpers/children';
import { type EmulatorProcess, startEmulator } from '../helpers/emulator';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { RawConnection } from '../helpers/raw-http';
import { describeWhen, itWhen, missingCommands, missingTmpfsMount } from '../helpers/tools';
import { until } from '../helpers/until';

jest.setTimeout(120_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first of `xs`, which must not be empty. */
function first<T>(xs: readonly T[]): T {
  const [x] = xs;
  if (x === undefined) throw new Error('expected at least one');
  return x;
}

/** Short thresholds, so that each fault raises its alarm within seconds. */
const ALARMS = {
  EvaluateSeconds: 1,
  LinkDownSeconds: 2,
  SorterSilentSeconds: 3,
  WcsPollSeconds: 3,
  QueueAgeSeconds: 3,
  OutboxAgeSeconds: 2,
  StorageStalledSeconds: 2,
  ClearAfterSeconds: 2,
};
const KEYS = [
  { Name: 'wcs-host', Key: 'wcs-key', Role: 'wcs' },
  { Name: 'shift-lead', Key: 'operator-key', Role: 'operator' },
  { Name: 'prometheus', Key: 'monitor-key', Role: 'monitor' },
];
const OPERATOR = { 'x-api-key': 'operator-key' };
const WCS = { 'x-api-key': 'wcs-key' };
const MONITOR = { 'x-api-key': 'monitor-key' };

interface Alarm {
  Id: number;
  Code: string;
  Severity: string;
  RaisedAt: string;
  ClearedAt: string | null;
  AcknowledgedAt: string | null;
  AcknowledgedBy: string | null;
  WhatToDo: string;
}

const alarms = async (svc: ServiceProcess): Promise<{ Active: Alarm[]; Journal: Alarm[] }> =>
  (await call(svc.base, 'GET', '/alarms', undefined, MONITOR)).json;
const activeCodes = async (svc: ServiceProcess) => (await alarms(svc)).Active.map((a) => a.Code);

/** Wait until `code` is active (or, `present` false, not active); returns how long that took (ms). */
async function waitAlarm(svc: ServiceProcess, code: string, present: boolean, ms: number): Promise<number> {
  const t0 = Date.now();
  await until(
    async () => (await activeCodes(svc)).includes(code) === present,
    ms,
    `${code} ${present ? 'raised' : 'cleared'} within ${ms} ms`,
    100,
  );
  return Date.now() - t0;
}

/** The journal's rows of `code`, oldest first. */
const journalOf = async (svc: ServiceProcess, code: string) => (await alarms(svc)).Journal.filter((a) => a.Code === code).reverse();

/** The log's raise and clear lines of `code`, in order. */
const logged = (svc: ServiceProcess, code: string) =>
  svc.logs
    .filter((l) => l.alarm === code && typeof l.msg === 'string' && /^alarm (raised|cleared)/.test(l.msg))
    .map((l) => (l.msg as string).split(':')[0]);

/**
 * The log's raise and clear lines of `code` once `n` of them have come, or after `ms` whatever
 * has come. A line reaches the test through the service's stdout pipe, written without blocking
 * (docs/operations.md, Logs): the answer of a GET /alarms sent after it can overtake it.
 */
async function loggedLines(svc: ServiceProcess, code: string, n: number, ms = 5000): Promise<Array<string | undefined>> {
  await until(() => logged(svc, code).length >= n, ms, `${n} log lines of ${code}`, 50).catch(() => {});
  return logged(svc, code);
}

function home(config: object): string {
  return tempHome({
    'config.json': { TestMode: false, Port: 0, Host: '127.0.0.1', ApiKeys: KEYS, LateDecisionMs: 1000, Alarms: ALARMS, ...config },
  });
}

describe('alarms raised and cleared by real faults', () => {
  let dir = '';
  let svc: ServiceProcess | undefined;
  let emu: EmulatorProcess | undefined;
  afterEach(async () => {
    await emu?.stop();
    await svc?.stop();
    emu = undefined;
    svc = undefined;
    removeHome(dir);
  });

  it('the sorter: silent (SORTER_SILENT), stopped (SORTER_LINK_DOWN, and an assignment waiting: OUTBOX_UNACKNOWLEDGED), back (all clear)', async () => {
    // A sorter that is connected and keeps the link alive, but inducts nothing.
    emu = await startEmulator(['--port', '0', '--rate', '0']);
    const port = emu.port;
    dir = home({ Sorter: { Host: '127.0.0.1', Port: port, ReconnectMaxMs: 500 }, MaxDeliveries: 0 });
    svc = await startServiceProcess(dir);
    await until(
      async () => (await call(svc!.base, 'GET', '/status', undefined, MONITOR)).json.Sorter.Connected === true,
      10_000,
      'connected',
      100,
    );
    await waitAlarm(svc, 'SORTER_SILENT', true, (ALARMS.SorterSilentSeconds + 3) * 1000);

    // The sorter stops: the link goes down, the silence is no longer the question.
    await emu.stop();
    emu = undefined;
    const down = await waitAlarm(svc, 'SORTER_LINK_DOWN', true, 10_000);
    expect(down).toBeLessThanOrEqual((ALARMS.LinkDownSeconds + ALARMS.EvaluateSeconds + 2) * 1000);
    await waitAlarm(svc, 'SORTER_SILENT', false, 3000);
    // The WCS answers meanwhile: its assignment waits in the outbox for the sorter.
    expect((await call(svc.base, 'POST', '/sortation', { TrackID: '0004711', Destination: 'D001' }, WCS)).status).toBe(200);
    await waitAlarm(svc, 'OUTBOX_UNACKNOWLEDGED', true, (ALARMS.OutboxAgeSeconds + 3) * 1000);

    // /status and /metrics say the same as GET /alarms.
    const status = (await call(svc.base, 'GET', '/status', undefined, MONITOR)).json;
    expect(status.Alarms.map((a: Alarm) => a.Code)).toEqual(expect.arrayContaining(['SORTER_LINK_DOWN', 'OUTBOX_UNACKNOWLEDGED']));
    const metrics = (await call(svc.base, 'GET', '/metrics', undefined, MONITOR)).text;
    expect(metrics).toMatch(/^sorter_integration_alarm_active\{code="SORTER_LINK_DOWN",severity="critical"\} 1$/m);
    expect(metrics).toMatch(/^sorter_integration_alarm_active\{code="OUTBOX_UNACKNOWLEDGED",severity="major"\} 1$/m);

    // The sorter is back, and inducts: the link is up, the outbox sent and acknowledged, items come.
    emu = await startEmulator(['--port', String(port), '--rate', '5', '--seed', '4']);
    await waitAlarm(svc, 'SORTER_LINK_DOWN', false, 10_000);
    await waitAlarm(svc, 'OUTBOX_UNACKNOWLEDGED', false, 10_000);
    await sleep(ALARMS.SorterSilentSeconds * 1000 + 1000);
    expect(await activeCodes(svc)).not.toContain('SORTER_SILENT');

    for (const code of ['SORTER_SILENT', 'SORTER_LINK_DOWN', 'OUTBOX_UNACKNOWLEDGED']) {
      const rows = await journalOf(svc, code);
      expect([code, rows.length]).toEqual([code, 1]);
      const row = first(rows);
      expect(Date.parse(row.ClearedAt ?? '')).toBeGreaterThan(Date.parse(row.RaisedAt));
      expect([code, await loggedLines(svc, code, 2)]).toEqual([code, ['alarm raised', 'alarm cleared']]);
    }
    expect((await call(svc.base, 'GET', '/metrics', undefined, MONITOR)).text).not.toMatch(
      /sorter_integration_alarm_active\{code="SORTER_LINK_DOWN"/,
    );
  });

  it('a link that keeps dropping and coming back: SORTER_LINK_UNSTABLE, though never down long enough for SORTER_LINK_DOWN', async () => {
    // The sorter drops the connection every second; the service is back within ReconnectMaxMs.
    emu = await startEmulator(['--port', '0', '--rate', '2', '--seed', '5', '--drop-every', '1']);
    dir = home({ Sorter: { Host: '127.0.0.1', Port: emu.port, ReconnectMaxMs: 300 }, Alarms: { ...ALARMS, LinkDropsInTenMinutes: 3 } });
    svc = await startServiceProcess(dir);
    const client = runWcsClient({ base: svc.base, apiKey: 'wcs-key', loops: 1, timeOut: 1 });
    try {
      // Three drops take about three seconds; the look once a second sees each.
      const raised = await waitAlarm(svc, 'SORTER_LINK_UNSTABLE', true, 15_000);
      const status = (await call(svc.base, 'GET', '/status', undefined, MONITOR)).json;
      expect(status.Sorter.ConnectionsLost).toBeGreaterThanOrEqual(3);
      const alarm = first((await alarms(svc)).Active.filter((a) => a.Code === 'SORTER_LINK_UNSTABLE'));
      expect(alarm.Severity).toBe('major');
      expect(alarm.WhatToDo).toMatch(/keeps dropping/);
      expect((await call(svc.base, 'GET', '/metrics', undefined, MONITOR)).text).toMatch(
        /^sorter_integration_alarm_active\{code="SORTER_LINK_UNSTABLE",severity="major"\} 1$/m,
      );
      // It stays raised while the drops go on, logged once; the link was never down for LinkDownSeconds.
      await sleep(3000);
      expect(await activeCodes(svc)).toContain('SORTER_LINK_UNSTABLE');
      expect(await loggedLines(svc, 'SORTER_LINK_UNSTABLE', 1)).toEqual(['alarm raised']);
      expect(await journalOf(svc, 'SORTER_LINK_DOWN')).toEqual([]);
      expect(raised).toBeLessThan(15_000);
    } finally {
      await client.stop();
    }
  });

  it('the WCS: not there (WCS_NOT_POLLING_*, DECISIONS_LATE, QUEUE_OLD_SORTATION), then polling and answering (all clear)', async () => {
    emu = await startEmulator(['--port', '0', '--rate', '5', '--seed', '7']);
    dir = home({ Sorter: { Host: '127.0.0.1', Port: emu.port } });
    const running = await startServiceProcess(dir);
    svc = running;
    for (const code of ['WCS_NOT_POLLING_SORTATION', 'WCS_NOT_POLLING_DESTINATION', 'DECISIONS_LATE', 'QUEUE_OLD_SORTATION'])
      await waitAlarm(running, code, true, 15_000);
    // What the alarm's runbook line points at: REQUESTs waiting for an assignment, the late ones, no decision yet.
    const decisions = async () => (await call(running.base, 'GET', '/status', undefined, MONITOR)).json.DecisionLatency;
    const unanswered = await decisions();
    expect(unanswered).toMatchObject({ P50Ms: null, P99Ms: null, Samples: 0 });
    expect(unanswered.Awaiting).toBeGreaterThan(0);
    expect(unanswered.Late).toBeGreaterThan(0);
    const client = runWcsClient({ base: svc.base, apiKey: 'wcs-key', loops: 1, timeOut: 1 });
    try {
      // The WCS takes the backlog and answers each REQUEST at once: nothing waits, no decision is late.
      for (const code of ['WCS_NOT_POLLING_SORTATION', 'WCS_NOT_POLLING_DESTINATION', 'QUEUE_OLD_SORTATION'])
        await waitAlarm(svc, code, false, 15_000);
      await waitAlarm(svc, 'DECISIONS_LATE', false, 20_000);
      const answered = await decisions();
      expect(answered.Samples).toBeGreaterThan(0);
      expect(answered.Late).toBeGreaterThanOrEqual(unanswered.Late);
    } finally {
      await client.stop();
    }
    for (const code of ['WCS_NOT_POLLING_SORTATION', 'DECISIONS_LATE', 'QUEUE_OLD_SORTATION'])
      expect([code, await loggedLines(svc, code, 2)]).toEqual([code, ['alarm raised', 'alarm cleared']]);
  });

  it('a client that never proves a read: DEAD_LETTERS; an operator acknowledges it and sends them back (logged with the key name): cleared', async () => {
    dir = home({
      Sorter: { Port: 1 },
      MaxDeliveries: 2,
      ExternalChangePollMs: 10,
      Alarms: { ...ALARMS, LinkDownSeconds: 0, WcsPollSeconds: 0, QueueAgeSeconds: 0 },
    });
    svc = await startServiceProcess(dir);
    const Database = (await import('../../db/sqlite')).default;
    const { createQueueStore } = await import('../../db/queue-store');
    const db = new Database(path.join(dir, 'data/sorter.db'));
    try {
      db.pragma('busy_timeout = 5000');
      createQueueStore(db).enqueue(
        [{ Type: 'VERIFY', TrackID: '0000001', Barcode: 'B1', Destination: 'D001', MessageCode: 212 }],
        new Date().toISOString(),
      );
    } finally {
      db.close();
    }
    for (let i = 0; i < 10 && (await call(svc.base, 'GET', '/status', undefined, MONITOR)).json.DeadLetters['Sortation Q'] === 0; i++) {
      const c = new RawConnection(svc.port);
      await c.request('GET', '/sortation?timeOut=1', { Connection: 'close', 'X-API-Key': 'wcs-key' });
      c.socket.resetAndDestroy(); // read, then reset: no proof of the read
      await sleep(100);
    }
    await waitAlarm(svc, 'DEAD_LETTERS', true, 5000);
    const dead = first((await alarms(svc)).Active.filter((a) => a.Code === 'DEAD_LETTERS'));
    expect(dead).toMatchObject({
      Severity: 'warning',
      AcknowledgedBy: null,
      WhatToDo: expect.stringContaining('POST /dead-letters/requeue'),
    });

    // A monitor may look, not acknowledge; the operator acknowledges, by name.
    expect((await call(svc.base, 'POST', `/alarms/${dead.Id}/ack`, undefined, MONITOR)).status).toBe(403);
    const acked = await call(svc.base, 'POST', `/alarms/${dead.Id}/ack`, undefined, OPERATOR);
    expect(acked.status).toBe(200);
    expect(acked.json.Alarm).toMatchObject({
      Id: dead.Id,
      AcknowledgedBy: 'shift-lead',
      AcknowledgedAt: expect.any(String),
      ClearedAt: null,
    });
    expect((await call(svc.base, 'POST', '/alarms/99999/ack', undefined, OPERATOR)).status).toBe(404);

    expect((await call(svc.base, 'POST', '/dead-letters/requeue', { All: true }, WCS)).status).toBe(403);
    expect((await call(svc.base, 'POST', '/dead-letters/requeue', { All: true }, OPERATOR)).json).toMatchObject({ Requeued: 1 });
    await waitAlarm(svc, 'DEAD_LETTERS', false, 5000);
    const row = first(await journalOf(svc, 'DEAD_LETTERS'));
    expect(row).toMatchObject({ AcknowledgedBy: 'shift-lead', ClearedAt: expect.any(String) });
    // Who did what is in the log by the key's name, never by the key (the requeue's line is the last of them).
    await svc.logLine((l) => /sent back to their queues by shift-lead/.test(String(l.msg)));
    const lines = svc.logs.filter((l) => /acknowledged by shift-lead|sent back to their queues by shift-lead/.test(String(l.msg)));
    expect(lines.map((l) => l.by)).toEqual(['shift-lead', 'shift-lead']);
    // The access log names the key of a refused request (AccessLog "errors": 400 and above).
    expect(svc.logs.filter((l) => l.access === true && l.status === 403).map((l) => l.key)).toEqual(['prometheus', 'wcs-host']);
    expect(JSON.stringify(svc.logs)).not.toContain('operator-key');
    expect(JSON.stringify(svc.logs)).not.toContain('monitor-key');
  });

  itWhen(missingCommands({ sqlite3: 'apt-get install sqlite3' }), "an operator's sqlite3")(
    "an operator's sqlite3 holding BEGIN EXCLUSIVE while the sorter sends: STORAGE_STALLED, cleared once it lets go",
    async () => {
      emu = await startEmulator(['--port', '0', '--rate', '5', '--seed', '9']);
      dir = home({
        Sorter: { Host: '127.0.0.1', Port: emu.port },
        LateDecisionMs: 0,
        Alarms: { ...ALARMS, WcsPollSeconds: 0, QueueAgeSeconds: 0 },
      });
      svc = await startServiceProcess(dir);
      await until(
        async () => (await call(svc!.base, 'GET', '/status', undefined, MONITOR)).json.Sorter.TelegramsIn > 5,
        10_000,
        'telegrams flow',
        100,
      );
      const sqlite: ChildProcess = spawn('sqlite3', [path.join(dir, 'data/sorter.db')], { stdio: ['pipe', 'ignore', 'inherit'] });
      killAtFileEnd(sqlite);
      try {
        sqlite.stdin!.write('BEGIN EXCLUSIVE;\nSELECT count(*) FROM sortation_queue;\n');
        const raised = await waitAlarm(svc, 'STORAGE_STALLED', true, 15_000);
        // Stalled after 1 s (/status), the alarm StorageStalledSeconds later, seen within a look or two.
        expect(raised).toBeLessThanOrEqual((1 + ALARMS.StorageStalledSeconds + 2 * ALARMS.EvaluateSeconds + 2) * 1000);
        const stalled = first((await alarms(svc)).Active.filter((a) => a.Code === 'STORAGE_STALLED'));
        expect(stalled.Severity).toBe('critical');
      } finally {
        sqlite.stdin!.end('ROLLBACK;\n.quit\n');
        await new Promise((r) => sqlite.once('exit', r));
      }
      await waitAlarm(svc, 'STORAGE_STALLED', false, 10_000);
      expect(await loggedLines(svc, 'STORAGE_STALLED', 2)).toEqual(['alarm raised', 'alarm cleared']);
      // The journal has it too: its row was written once the storage moved again.
      const row = first(await journalOf(svc, 'STORAGE_STALLED'));
      expect(row.ClearedAt).not.toBeNull();
    },
  );

  it('kill -9, then a start: RESTART_AFTER_CRASH; the alarms left active are looked at again; acknowledging clears it; a clean stop raises nothing', async () => {
    dir = home({ Sorter: { Port: 1, ReconnectMaxMs: 500 } });
    svc = await startServiceProcess(dir);
    expect(await activeCodes(svc)).toEqual([]);
    await waitAlarm(svc, 'SORTER_LINK_DOWN', true, 10_000);
    const before = (await alarms(svc)).Active.find((a) => a.Code === 'SORTER_LINK_DOWN')!;
    // Its row is committed a moment after the answer that shows it (the journal is written by the writer thread).
    const Database = (await import('../../db/sqlite')).default;
    await until(
      () => {
        const db = new Database(path.join(dir, 'data/sorter.db'), { readonly: true });
        try {
          return db.prepare('SELECT 1 FROM alarm_journal WHERE id = ?').get(before.Id) !== undefined;
        } finally {
          db.close();
        }
      },
      5000,
      'the alarm row committed',
      20,
    );
    await svc.stop('SIGKILL');
    svc = await startServiceProcess(dir);
    const after = await alarms(svc);
    const crash = after.Active.find((a) => a.Code === 'RESTART_AFTER_CRASH')!;
    expect(crash).toMatchObject({ Severity: 'warning', AcknowledgedBy: null });
    expect(crash.Id).toBeGreaterThan(before.Id);
    // The link alarm the killed run left active: its condition is looked at again from this start
    // (down for less than LinkDownSeconds yet: cleared), and it is raised anew once it holds again.
    await waitAlarm(svc, 'SORTER_LINK_DOWN', true, 10_000);
    const link = await journalOf(svc, 'SORTER_LINK_DOWN');
    expect(link.map((a) => [a.Id, a.ClearedAt === null])).toEqual([
      [before.Id, false],
      [expect.any(Number), true],
    ]);
    const acked = await call(svc.base, 'POST', `/alarms/${crash.Id}/ack`, undefined, OPERATOR);
    expect(acked.json.Alarm).toMatchObject({ AcknowledgedBy: 'shift-lead', ClearedAt: expect.any(String) });
    expect(await activeCodes(svc)).not.toContain('RESTART_AFTER_CRASH');
    // A clean stop, a start: no crash to report.
    await svc.stop();
    svc = await startServiceProcess(dir);
    expect(await activeCodes(svc)).not.toContain('RESTART_AFTER_CRASH');
    expect((await journalOf(svc, 'RESTART_AFTER_CRASH')).length).toBe(1);
  });
});

/** A failed wait's error, with the storage's and the link's state and what the disk holds. */
const withStorageState = (svc: ServiceProcess, dir: string) => async (e: Error) => {
  const { Storage, Sorter } = (await call(svc.base, 'GET', '/status', undefined, MONITOR)).json;
  const files = fs.readdirSync(path.join(dir, 'data')).map((f) => `${f} ${fs.statSync(path.join(dir, 'data', f)).size}`);
  throw new Error(`${e.message}; Storage ${JSON.stringify(Storage)}; Sorter ${JSON.stringify(Sorter)}; data/: ${files.join(', ')}`);
};

describeWhen(missingTmpfsMount(), 'a full disk')('alarms on a small disk of its own (a tmpfs)', () => {
  let mnt: string;
  let svc: ServiceProcess | undefined;
  let emu: EmulatorProcess | undefined;
  beforeAll(() => {
    mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-alarm-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
  });
  afterAll(async () => {
    await emu?.stop();
    if (svc && svc.proc.exitCode === null) await svc.stop();
    execFileSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });

  it('nearly full: DISK_NEARLY_FULL; full: STORAGE_FAILING; space back: both clear, and the journal has both rows', async () => {
    emu = await startEmulator(['--port', '0', '--rate', '20', '--seed', '3', '--capacity', '100000']);
    const MB = 1048576;
    fs.writeFileSync(
      path.join(mnt, 'config.json'),
      JSON.stringify({
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        ApiKeys: KEYS,
        Sorter: { Host: '127.0.0.1', Port: emu.port, TrafficLog: false },
        LateDecisionMs: 0,
        // No history cut for space: with one, the cut frees pages faster than 20 items/s fill
        // them and a full disk may never fail a commit (test/e2e/history-bound.test.ts shows that).
        HistoryKeepFreeShare: 0,
        HistoryMaxBytes: 1024 * MB,
        Alarms: { ...ALARMS, MinFreeDiskBytes: 3 * MB, WcsPollSeconds: 0, QueueAgeSeconds: 0 },
      }),
    );
    svc = await startServiceProcess(mnt);
    await sleep(1500);
    expect(await activeCodes(svc)).not.toContain('DISK_NEARLY_FULL');
    const free = () => {
      const st = fs.statfsSync(mnt);
      return st.bavail * st.bsize;
    };
    // Nearly full: 2 MB left.
    const nearly = path.join(mnt, 'filler-1');
    fs.writeFileSync(nearly, Buffer.alloc(Math.max(0, free() - 2 * MB)));
    await waitAlarm(svc, 'DISK_NEARLY_FULL', true, 5000);
    expect(await activeCodes(svc)).not.toContain('STORAGE_FAILING');
    // Full: every byte. Small commits may still go through between failed ones (in the WAL's
    // space a failed larger one took), so that the state turns Ok between failures: the alarm
    // holds all the same, and /status counts the failures.
    const full = path.join(mnt, 'filler-2');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${full}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // "No space left on device": that is the point
    }
    await waitAlarm(svc, 'STORAGE_FAILING', true, 15_000).catch(withStorageState(svc, mnt));
    const storage = (await call(svc.base, 'GET', '/status', undefined, MONITOR)).json.Storage;
    expect(storage.Failures).toBeGreaterThan(0);
    expect(storage.LastFailure).toEqual({ At: expect.any(String), Error: expect.stringMatching(/SQLITE_FULL/) });
    expect((await call(svc.base, 'GET', '/health/ready', undefined, MONITOR)).status).toBe(503);
    const failing = (await alarms(svc)).Active.find((a) => a.Code === 'STORAGE_FAILING')!;
    expect(failing.Severity).toBe('critical');
    expect((await call(svc.base, 'GET', '/metrics', undefined, MONITOR)).text).toMatch(
      /^sorter_integration_alarm_active\{code="STORAGE_FAILING",severity="critical"\} 1$/m,
    );
    // Space back.
    fs.rmSync(full);
    fs.rmSync(nearly);
    await waitAlarm(svc, 'STORAGE_FAILING', false, 15_000);
    await waitAlarm(svc, 'DISK_NEARLY_FULL', false, 5000);
    // The rows the full disk refused are written once it takes them again.
    const Database = (await import('../../db/sqlite')).default;
    await until(
      () => {
        const db = new Database(path.join(mnt, 'data/sorter.db'), { readonly: true });
        try {
          const rows = db
            .prepare("SELECT code FROM alarm_journal WHERE code IN ('STORAGE_FAILING', 'DISK_NEARLY_FULL') AND cleared_at IS NOT NULL")
            .all();
          return rows.length === 2;
        } finally {
          db.close();
        }
      },
      10_000,
      'both rows, cleared, in alarm_journal',
      200,
    );
    for (const code of ['DISK_NEARLY_FULL', 'STORAGE_FAILING'])
      expect([code, await loggedLines(svc, code, 2)]).toEqual([code, ['alarm raised', 'alarm cleared']]);
    // The log says "failing" once and "commits succeed again" once, 10 s after the last failure
    // (RECOVERED_AFTER_MS), however often small commits went through between failed ones.
    const storageLines = () => svc!.logs.filter((l) => l.storage === 'Failing' || l.storage === 'Ok').map((l) => l.storage);
    await until(async () => storageLines().includes('Ok'), 15_000, 'storage: commits succeed again, logged', 200);
    await sleep(1500);
    expect(storageLines()).toEqual(['Failing', 'Ok']);
    expect(svc.proc.exitCode).toBeNull();
  });
});
