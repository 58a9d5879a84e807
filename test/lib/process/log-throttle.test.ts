// Throttled log lines: the first at once, then one a period with the count held back.
import { Writable } from 'node:stream';
import pino from 'pino';
import { ThrottledLog } from '../../../lib/process/log-throttle';

function memoryLog() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, log: pino({ base: undefined }, stream) };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('ThrottledLog', () => {
  it('writes the first line at once, holds back repeats within the period, then says how many', async () => {
    let now = 0;
    const { lines, log } = memoryLog();
    const t = new ThrottledLog(log, 'warn', 60_000, () => now);
    for (let i = 0; i < 100; i++, now += 1000) t.write({ attempt: i }, 'cannot reach the sorter');
    await tick();
    expect(lines.map((l) => [l.attempt, l.repeatedSinceLastLine, l.msg])).toEqual([
      [0, undefined, 'cannot reach the sorter'],
      [60, 59, 'cannot reach the sorter (and 59 more like it since the last line)'],
    ]);
    expect(lines[0]?.level).toBe(40);
  });

  it('starts a new episode after reset: the next occurrence is written at once', async () => {
    let now = 0;
    const { lines, log } = memoryLog();
    const t = new ThrottledLog(log, 'error', 10_000, () => now);
    t.write({}, 'x');
    t.write({}, 'x');
    expect(t.reset()).toBe(1);
    now += 1;
    t.write({}, 'x');
    await tick();
    expect(lines).toHaveLength(2);
  });
});
