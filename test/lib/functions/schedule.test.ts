// The schedule trigger (lib/functions/schedule.ts) with node-cron's real clock: the manifest's
// REQUEST expiry (every second) runs against a live-mode service on a real SQLite file, a
// function that fails is logged and does not stop the others, and the stopper stops them all; a
// function its settings switch off is not scheduled (its cron would only wake an idle service).
import { type Manifest, loadManifest } from '../../../lib/functions/manifest';
import { startSchedules } from '../../../lib/functions/schedule';
import { starts as slowStarts } from '../../fixtures/functions/slow-schedule';
import { capturingLogger } from '../../helpers/log';
import { freePort } from '../../helpers/net';
import { type TestService, testService } from '../../helpers/service';
import { until } from '../../helpers/until';
import { induct } from '../../helpers/messages';

const queued = () => t.service.db.prepare('SELECT track_id FROM sortation_queue ORDER BY id').pluck().all();
/** A REQUEST received a minute ago: older than MaxRequestAgeSeconds. */
const enqueueOld = (trackId: string) => t.service.writer.run('enqueue', [[induct(trackId)], new Date(Date.now() - 60_000).toISOString()]);

let t: TestService;
afterEach(() => t.close());

it('runs the manifest scheduled functions on their cron, logs one that fails, and stops them all', async () => {
  t = await testService({ TestMode: false, MaxRequestAgeSeconds: 5, Sorter: { Port: await freePort() } });
  const project = loadManifest();
  const manifest: Manifest = {
    ...project,
    functions: {
      ...project.functions,
      failing: {
        handler: 'test/fixtures/functions/failing-schedule',
        description: 'always fails',
        events: [{ schedule: { cron: '* * * * * *' } }],
      },
    },
  };
  expect(project.functions.expireRequests?.events).toEqual([{ schedule: { cron: '* * * * * *' } }]);
  const { log, lines } = capturingLogger();
  await enqueueOld('OLD1');
  await t.publish([induct('NEW1')]);
  const stop = startSchedules(manifest, { ...t.service.deps, log });
  try {
    await until(() => queued().length === 1, 3000, 'the old REQUEST expired');
    expect(queued()).toEqual(['NEW1']);
    expect(t.service.db.prepare("SELECT track_id FROM delivered_history WHERE removed_reason = 'Expired'").pluck().all()).toEqual(['OLD1']);
    await until(() => lines.some((l) => l.msg === 'scheduled function failing failed'), 3000);
    expect(lines.find((l) => l.msg === 'scheduled function failing failed')).toMatchObject({
      level: 50,
      function: 'failing',
      err: { message: 'the disk is on fire' },
    });
  } finally {
    stop();
  }
  await enqueueOld('OLD2');
  await new Promise((r) => setTimeout(r, 1300)); // past the next second's run, had it not stopped
  expect(queued()).toEqual(['NEW1', 'OLD2']);
});

it('does not schedule a function its settings switch off: the REQUEST expiry without MaxRequestAgeSeconds', async () => {
  t = await testService({ TestMode: false, MaxRequestAgeSeconds: 0, Sorter: { Port: await freePort() } });
  const project = loadManifest();
  const manifest: Manifest = {
    ...project,
    functions: {
      ...project.functions,
      off: {
        handler: 'test/fixtures/functions/switched-off-schedule',
        description: 'never runs',
        events: [{ schedule: { cron: '* * * * * *' } }],
      },
    },
  };
  const { log, lines } = capturingLogger();
  let expiries = 0;
  const store = { ...t.service.deps.store, expireRequests: async () => (expiries++, 0) };
  const stop = startSchedules(manifest, { ...t.service.deps, store, log });
  try {
    await new Promise((r) => setTimeout(r, 1300)); // past a second's run, had they been scheduled
    expect(lines.filter((l) => l.msg === 'scheduled function off failed')).toEqual([]);
    expect(expiries).toBe(0);
  } finally {
    stop();
  }
  // Switched on, the same expiry runs every second.
  const on = startSchedules(manifest, { ...t.service.deps, settings: { ...t.service.deps.settings, MaxRequestAgeSeconds: 5 }, store, log });
  try {
    await until(() => expiries > 0, 3000, 'the expiry ran');
  } finally {
    on();
  }
});

it('does not sample the event loop after a light function: the size bound looks every 4 s, an idle service stays asleep', async () => {
  t = await testService({ TestMode: false, Sorter: { Port: await freePort() } });
  const manifest: Manifest = {
    ...loadManifest(),
    functions: {
      bound: {
        handler: 'handlers/history-bound',
        description: 'the size bound, every second here',
        events: [{ schedule: { cron: '* * * * * *' } }],
      },
      failing: {
        handler: 'test/fixtures/functions/failing-schedule',
        description: 'always fails',
        events: [{ schedule: { cron: '* * * * * *' } }],
      },
    },
  };
  const { log } = capturingLogger();
  let busy = 0;
  const before = t.service.deps.storageWatch.status().MeasuredAt;
  const stop = startSchedules(manifest, { ...t.service.deps, log, eventLoop: { ...t.service.deps.eventLoop, busy: () => busy++ } });
  try {
    await until(() => t.service.deps.storageWatch.status().MeasuredAt !== before && busy > 0, 3000, 'both ran');
    await new Promise((r) => setTimeout(r, 1100));
    // The failing function's runs, one a second; the bound's looks add none.
    const looks = t.service.deps.storageWatch.status().MeasuredAt;
    expect(looks).not.toBe(before);
    expect(busy).toBeGreaterThanOrEqual(2);
    expect(busy).toBeLessThanOrEqual(3);
  } finally {
    stop();
  }
});

it('runs a schedule of every N seconds at the multiples of N s, never overlapping itself: a run still going skips the next', async () => {
  t = await testService({ TestMode: false, Sorter: { Port: await freePort() } });
  const manifest: Manifest = {
    ...loadManifest(),
    functions: {
      slow: {
        handler: 'test/fixtures/functions/slow-schedule',
        description: 'takes 1.2 s',
        events: [{ schedule: { cron: '* * * * * *' } }],
      },
    },
  };
  const { log } = capturingLogger();
  slowStarts.length = 0;
  const stop = startSchedules(manifest, { ...t.service.deps, log });
  try {
    await until(() => slowStarts.length >= 3, 8000, 'three runs');
  } finally {
    stop();
  }
  // On the whole seconds (a timer fires a little late, never early: lib/host/beat.ts), 2 s apart:
  // the second after each start finds the run still going.
  for (const at of slowStarts) expect(at % 1000).toBeLessThan(250);
  const gaps = slowStarts.slice(1).map((at, i) => Math.round((at - slowStarts[i]!) / 1000));
  expect(gaps).toEqual(gaps.map(() => 2));
  const ran = slowStarts.length;
  await new Promise((r) => setTimeout(r, 2300)); // past the next run, had it not stopped
  expect(slowStarts.length).toBe(ran);
}, 15_000);
