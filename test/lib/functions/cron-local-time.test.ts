// node-cron as patched by patches/node-cron+4.6.0.patch (applied by `npm install`): a schedule
// without a timezone is computed from Date's local-time getters, not from Intl.DateTimeFormat,
// whose first use costs a process about 9 MB of resident memory (ICU's locale data). Each case
// runs in a child process with its own TZ, so that local time is not UTC. A schedule given a
// timezone still goes through Intl, as node-cron documents.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

interface Runs {
  patched: boolean;
  /** Intl.DateTimeFormat objects constructed while the schedule was computed. */
  formats: number;
  /** The next runs as local [year, month, day, hour, minute, second, weekday]. */
  local: number[][];
  utc: string[];
  now: string;
}

/** The next `count` runs of `expression` in a fresh process whose local time zone is `tz`. */
function nextRuns(tz: string, expression: string, count: number, timezone?: string): Runs {
  const script = `
    const fs = require('node:fs');
    const patched = fs.readFileSync(require.resolve('node-cron').replace(/node-cron\\.cjs$/, '_shared.cjs'), 'utf8').includes('function localTimezoneGMT');
    let formats = 0;
    const Original = Intl.DateTimeFormat;
    Intl.DateTimeFormat = function (...args) { formats++; return new Original(...args); };
    const cron = require('node-cron');
    const now = new Date();
    const task = cron.createTask(${JSON.stringify(expression)}, () => {}, ${JSON.stringify(timezone ? { timezone } : {})});
    const runs = task.getNextRuns(${count});
    task.destroy();
    const local = runs.map((d) => [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getDay()]);
    console.log(JSON.stringify({ patched, formats, local, utc: runs.map((d) => d.toISOString()), now: now.toISOString() }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root, env: { ...process.env, TZ: tz }, encoding: 'utf8' }));
}

it('the installed node-cron carries the patch (npm install applies patches/)', () => {
  expect(nextRuns('UTC', '* * * * *', 1).patched).toBe(true);
});

it.each([
  ['Asia/Kolkata', '+05:30'],
  ['America/New_York', '-05:00 in November'],
  ['UTC', 'no offset'],
])('a schedule without a timezone runs on local time in %s (%s), and constructs no Intl.DateTimeFormat', (tz) => {
  // Housekeeping's own schedule: minute 17 of every hour, local time.
  const hourly = nextRuns(tz, '17 * * * *', 3);
  expect(hourly.formats).toBe(0);
  expect(hourly.local.map(([, , , , minute, second]) => [minute, second])).toEqual([
    [17, 0],
    [17, 0],
    [17, 0],
  ]);
  const hours = hourly.utc.map((iso) => Date.parse(iso));
  expect(hours[0]! - Date.parse(hourly.now)).toBeGreaterThan(0);
  expect(hours[0]! - Date.parse(hourly.now)).toBeLessThanOrEqual(3_600_000);
  expect([hours[1]! - hours[0]!, hours[2]! - hours[1]!]).toEqual([3_600_000, 3_600_000]);

  // Every 5 seconds, node-cron's seconds field (the service runs its own schedules of every N seconds on the beat).
  const fiveSeconds = nextRuns(tz, '*/5 * * * * *', 4);
  expect(fiveSeconds.formats).toBe(0);
  expect(fiveSeconds.local.every(([, , , , , second]) => second! % 5 === 0)).toBe(true);
  const secs = fiveSeconds.utc.map((iso) => Date.parse(iso));
  expect(secs.slice(1).map((s, i) => s - secs[i]!)).toEqual([5000, 5000, 5000]);

  // Hours and weekdays are local: 02:30 on Mondays is 02:30 by the local clock, on a Monday there.
  const weekly = nextRuns(tz, '30 2 * * 1', 2);
  expect(weekly.formats).toBe(0);
  expect(weekly.local.map(([, , , hour, minute, , weekday]) => [hour, minute, weekday])).toEqual([
    [2, 30, 1],
    [2, 30, 1],
  ]);
});

it('a schedule given a timezone still computes in that zone (through Intl)', () => {
  // 02:30 in Tokyo (UTC+9, no daylight saving) is 17:30 UTC the day before, whatever the local zone.
  const tokyo = nextRuns('America/New_York', '30 2 * * *', 2, 'Asia/Tokyo');
  expect(tokyo.formats).toBeGreaterThan(0);
  expect(tokyo.utc.map((iso) => iso.slice(11, 19))).toEqual(['17:30:00', '17:30:00']);
});
