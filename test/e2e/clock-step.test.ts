// A step of the system clock while messages wait: NTP setting the clock of a box that started
// with a wrong time. Telegrams from a scripted PLC over real TCP into a real SQLite file, the wall
// clock set an hour forward and then back: in the service built here (its clock driven by the
// test), and in the service's own process under libfaketime (its schedules, its alarm looks, its
// HTTP). MaxRequestAgeSeconds, QUEUE_OLD_*, OUTBOX_UNACKNOWLEDGED, /status and the metrics count a
// queued message's or outbox entry's age from its arrival on the clock that never steps.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeContent, sorterMessageData } from '../../bench/v1-codec';
import { expireRequests } from '../../handlers/expire-requests';
import { statusOf } from '../../handlers/status';
import { metricsSnapshot } from '../../lib/ops/metrics-snapshot';
import { steadyWallMs } from '../../lib/link/sorter-link';
import { type TestService, testService } from '../helpers/service';
import { type ScriptedPlc, scriptedPlc } from '../helpers/scripted-plc';
import { until } from '../helpers/until';
import { induct } from '../helpers/messages';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { type Missing, itWhen } from '../helpers/tools';

const HOUR = 3_600_000;
let t: TestService | null = null;
let plc: ScriptedPlc | null = null;
afterEach(async () => {
  await t?.close();
  await plc?.close();
  t = plc = null;
});

/** The REQU, VERI or SCAN of `message` from the PLC, numbered `seq`. */
const dataTelegram = (message: Parameters<typeof sorterMessageData>[0], seq: number) => {
  const { type, data } = sorterMessageData(message);
  return encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq, type, flag: 'D', data });
};

it('neither expires a fresh REQUEST when the clock is set forward nor keeps a stale one when it is set back', async () => {
  let step = 0;
  const clock = () => new Date(Date.now() + step);
  const sorter = (plc = scriptedPlc(() => {}));
  const service = (t = await testService(
    { TestMode: false, MaxRequestAgeSeconds: 1, Sorter: { Port: await sorter.listening } },
    {},
    clock,
    steadyWallMs,
  ));
  await until(() => sorter.received.some((x) => x.type === 'SYNS'));
  const deps = service.service.deps;
  let seq = 0;
  const send = async (track: string) => {
    const before = deps.store.depth('sortation');
    sorter.toHost(dataTelegram(induct(track), ++seq));
    await until(() => deps.store.depth('sortation') === before + 1);
  };
  const ages = async () => ({
    status: (await statusOf(deps)).OldestMessageAgeSeconds,
    metrics: (await metricsSnapshot(deps, clock())).queues.sortation.oldestAgeSeconds,
  });
  const expired = async () => ((await expireRequests(deps)) as { body: { Expired: number } }).body.Expired;

  await send('FORWARD');
  step = HOUR; // set an hour forward: the REQUEST is a few milliseconds old, not an hour
  expect(await expired()).toBe(0);
  expect(deps.store.depth('sortation')).toBe(1);
  expect((await ages()).status).toBeLessThan(1);
  expect((await ages()).metrics).toBeLessThan(1);
  await new Promise((r) => setTimeout(r, 1100));
  expect((await ages()).status).toBeGreaterThanOrEqual(1);
  expect(await expired()).toBe(1);

  step = 0; // set back an hour: a REQUEST stored an hour "ahead" still expires after its second
  await send('BACK');
  step = -HOUR;
  expect(await expired()).toBe(0);
  await new Promise((r) => setTimeout(r, 1100));
  expect((await ages()).metrics).toBeGreaterThanOrEqual(1);
  expect(await expired()).toBe(1);
  expect(deps.store.depth('sortation')).toBe(0);
  expect(
    t.service.db.prepare("SELECT track_id, removed_reason FROM delivered_history WHERE removed_reason = 'Expired' ORDER BY id").all(),
  ).toEqual([
    { track_id: 'FORWARD', removed_reason: 'Expired' },
    { track_id: 'BACK', removed_reason: 'Expired' },
  ]);
});

/** libfaketime, where the distribution puts it (Debian: the libfaketime package). */
const FAKETIME = ['x86_64-linux-gnu', 'aarch64-linux-gnu', 'arm-linux-gnueabihf']
  .map((arch) => `/usr/lib/${arch}/faketime/libfaketimeMT.so.1`)
  .find((file) => fs.existsSync(file));
const missingFaketime: Missing = FAKETIME ? {} : { libfaketime: 'apt-get install libfaketime' };

itWhen(missingFaketime, 'the service under libfaketime')(
  'in its own process: the expiry, the alarms and /status count from the arrival while NTP steps the clock',
  async () => {
    const sorter = (plc = scriptedPlc(() => {}));
    const offset = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'faketime-')), 'offset');
    fs.writeFileSync(offset, '+0');
    const home = tempHome({
      'config.json': {
        TestMode: false,
        Host: '127.0.0.1',
        Port: 0,
        MaxRequestAgeSeconds: 15,
        Alarms: { EvaluateSeconds: 1 },
        Sorter: { Host: '127.0.0.1', Port: await sorter.listening },
      },
    });
    let svc: ServiceProcess | null = null;
    try {
      svc = await startServiceProcess(home, {
        LD_PRELOAD: FAKETIME,
        FAKETIME_TIMESTAMP_FILE: offset,
        FAKETIME_CACHE_DURATION: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      });
      const { base, logs } = svc;
      await until(() => sorter.received.some((x) => x.type === 'SYNS'), 10_000);
      const status = async () => (await call(base, 'GET', '/status')).json;
      const seenAfterMs: Record<string, number> = {};
      // The offset file replaced whole (a rename), never truncated and rewritten: libfaketime
      // reading it in between would take the empty file for no change and keep the old offset
      // until its next read. It re-reads the file at most every 1-2 s (FAKETIME_CACHE_DURATION 1,
      // in whole seconds) and the alarm look that notices the step comes every second: about 3 s
      // on a quiet machine; the bound leaves a loaded one room.
      const stepTo = async (to: string, word: 'forward' | 'back') => {
        const seen = logs.length;
        const at = Date.now();
        fs.writeFileSync(`${offset}.new`, to);
        fs.renameSync(`${offset}.new`, offset);
        const said = () => logs.slice(seen).some((l) => String(l.msg).startsWith(`the system clock was set ${word}`));
        await until(said, 12_000).catch((err: Error) => {
          // What the service said meanwhile, to tell a late look from a step not seen at all.
          const since = logs.slice(seen).map((l) => `${String(l.time)} ${String(l.msg)}`);
          throw new Error(`${err.message}\nthe service's log since the step (${since.length} lines):\n${since.slice(-30).join('\n')}`);
        });
        seenAfterMs[word] = Date.now() - at;
      };
      // Each time taken before the telegram is sent, so never after its arrival: the bounds below
      // hold however late this process sees what happened (a busy machine).
      const forwardAt = Date.now();
      sorter.toHost(dataTelegram({ Type: 'VERIFY', TrackID: 'V1', Barcode: '', Destination: 'D1', MessageCode: 212 }, 1));
      sorter.toHost(dataTelegram(induct('FORWARD'), 2));
      await until(async () => (await status())['Sortation Q'] === 2);
      // Its answer waits in the outbox for an ACK this PLC never sends.
      expect((await call(base, 'POST', '/sortation', { TrackID: 'FORWARD', Destination: 'D1' })).status).toBe(200);

      await stepTo('+3600', 'forward'); // an hour forward: the two are seconds old, not an hour
      await new Promise((r) => setTimeout(r, 1_500)); // an expiry run and an alarm look on the new clock
      const after = await status();
      expect(Date.now() - forwardAt).toBeLessThan(14_000); // still inside MaxRequestAgeSeconds
      expect(after.RequestsRemoved.Expired).toBe(0);
      expect(after['Sortation Q']).toBe(2);
      expect(after.OldestMessageAgeSeconds).toBeLessThan(60);
      const active = (await call(base, 'GET', '/alarms')).json.Active.map((a: { Code: string }) => a.Code);
      expect(active).not.toContain('QUEUE_OLD_SORTATION');
      expect(active).not.toContain('OUTBOX_UNACKNOWLEDGED');
      await until(async () => (await status()).RequestsRemoved.Expired === 1, 17_000); // and expires once 15 s old
      expect(Date.now() - forwardAt).toBeGreaterThanOrEqual(14_900);

      const backAt = Date.now();
      sorter.toHost(dataTelegram(induct('BACK'), 3)); // stored an hour ahead of the clock to come
      await until(async () => (await status())['Sortation Q'] === 2);
      await stepTo('-3600', 'back');
      await until(async () => (await status()).RequestsRemoved.Expired === 2, 20_000); // expires after its 15 s all the same
      expect(Date.now() - backAt).toBeGreaterThanOrEqual(14_900);
      expect((await status()).OldestMessageAgeSeconds).toBeGreaterThanOrEqual(29); // the VERIFY: its age since it came (30 s and more)
      console.log(`CLOCK-STEP ${JSON.stringify({ seen_after_ms: seenAfterMs })}`);
    } finally {
      await svc?.stop();
      removeHome(home);
      fs.rmSync(path.dirname(offset), { recursive: true, force: true });
    }
  },
  90_000,
);
