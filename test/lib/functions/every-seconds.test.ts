// Which cron expressions the schedule runs on the beat (lib/functions/schedule.ts, everySeconds):
// every N seconds, N a divisor of a minute, whose runs fall on the same instants as node-cron's.
import { loadManifest } from '../../../lib/functions/manifest';
import { everySeconds } from '../../../lib/functions/schedule';

it('knows a schedule of every N seconds (N a divisor of a minute), which runs on the beat', () => {
  expect(everySeconds('* * * * * *')).toBe(1);
  expect(everySeconds('*/4 * * * * *')).toBe(4);
  expect(everySeconds(' */30 * * * * * ')).toBe(30);
  expect(everySeconds('*/7 * * * * *')).toBeUndefined(); // 60 is no multiple of 7: node-cron restarts at each minute
  expect(everySeconds('*/0 * * * * *')).toBeUndefined();
  expect(everySeconds('0 * * * * *')).toBeUndefined();
  expect(everySeconds('*/5 * * * *')).toBeUndefined(); // every 5 minutes
  expect(everySeconds('17 * * * *')).toBeUndefined();
  expect(loadManifest().functions.historyBound?.events).toEqual([{ schedule: { cron: '*/4 * * * * *' } }]);
});
