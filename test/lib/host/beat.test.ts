// The beat: periodic work at the clock's multiples of its period, so that an idle service's
// timers of the same period (or of periods that divide each other) fire together.
import { everyBeat, timerAt, untilBeat } from '../../../lib/host/beat';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How late after its multiple a call may come on a loaded machine (ms). */
const SLACK_MS = 40;

describe('untilBeat', () => {
  it('is the time to the next multiple of the period, at least minMs ahead', () => {
    expect(untilBeat(10_000, 2000)).toBe(0); // on a multiple: that one
    expect(untilBeat(10_001, 2000)).toBe(1999);
    expect(untilBeat(11_999, 2000)).toBe(1);
    expect(untilBeat(11_999, 2000, 1)).toBe(1);
    expect(untilBeat(11_999, 2000, 2)).toBe(2001); // 12,000 is too near: 14,000
    expect(untilBeat(10_500, 2000, 1000)).toBe(1500);
    expect(untilBeat(10_000, 2000, 1)).toBe(2000); // the next one
    expect(untilBeat(10_000, 160, 80)).toBe(80); // 10,080 is a multiple of 160
  });
});

describe('everyBeat', () => {
  it('calls at the multiples of its period, and two beats whose periods divide each other call together', async () => {
    const fast: number[] = [];
    const slow: number[] = [];
    const stopFast = everyBeat(100, () => fast.push(Date.now()));
    const stopSlow = everyBeat(200, () => slow.push(Date.now()));
    try {
      await sleep(1050);
    } finally {
      stopFast();
      stopSlow();
    }
    expect(fast.length).toBeGreaterThanOrEqual(8);
    expect(fast.length).toBeLessThanOrEqual(11);
    expect(slow.length).toBeGreaterThanOrEqual(4);
    expect(slow.length).toBeLessThanOrEqual(6);
    // On the multiples, give or take a loaded machine's late timer: a beat off its multiples
    // would put most calls past the slack.
    const onMultiple = (ts: number[], period: number) => ts.filter((t) => t % period < SLACK_MS).length;
    expect(onMultiple(fast, 100)).toBeGreaterThanOrEqual(fast.length - 2);
    expect(onMultiple(slow, 200)).toBeGreaterThanOrEqual(slow.length - 1);
    // The slow calls fall on multiples the fast beat also called at: the same wake-up. All but one:
    // a fast call more than half a period late (a loaded machine) skips the next multiple, by
    // design, and a slow call may fall on that one (seen once on Node 26 beside other suites).
    const shared = slow.filter((t) => fast.some((f) => Math.floor(f / 100) === Math.floor(t / 100)));
    expect(shared.length).toBeGreaterThanOrEqual(slow.length - 1);
    // Never two calls for one multiple.
    expect(new Set(fast.map((t) => Math.floor(t / 100))).size).toBe(fast.length);
  });

  it('skips the multiples a stalled event loop missed rather than catching up, and stops', async () => {
    const calls: number[] = [];
    const stop = everyBeat(50, () => {
      calls.push(Date.now());
      if (calls.length === 2) for (const until = Date.now() + 300; Date.now() < until;); // the event loop stalls
    });
    try {
      await sleep(700);
    } finally {
      stop();
    }
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(25); // no burst after the stall
    const stopped = calls.length;
    await sleep(150);
    expect(calls.length).toBe(stopped);
  });

  it('follows a call that came more than half a period late at the multiple after the next, not at once', () => {
    // Jest's clock: the second call is made to come 30 ms after its multiple (a busy machine).
    jest.useFakeTimers({ now: 1_700_000_000_000 }); // a multiple of 50
    try {
      const calls: number[] = [];
      const stop = everyBeat(50, () => {
        if (calls.length === 1) jest.setSystemTime(Date.now() + 30);
        calls.push(Date.now());
      });
      jest.advanceTimersByTime(400);
      stop();
      const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
      expect(calls.length).toBeGreaterThanOrEqual(5);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(25);
      expect(calls.every((t) => t % 50 === 0 || t === calls[1])).toBe(true); // on the multiples, the late one apart
    } finally {
      jest.useRealTimers();
    }
  });

  it.each([
    ['back', -3_600_050],
    ['forward', 3_600_050],
  ])('goes on at the multiples of a clock set %s by an hour, without a burst or a gap', (_, stepMs) => {
    // Jest's clock, not the machine's: what is checked is the arithmetic after a step, exactly,
    // which a loaded machine's late timers would blur (one such timer, 40 ms late, once failed
    // this test with real time).
    jest.useFakeTimers({ now: 1_700_000_000_037 }); // started off a multiple
    try {
      let offset = 0;
      const clock = () => Date.now() + offset;
      const calls: Array<{ real: number; clock: number }> = [];
      const stop = everyBeat(100, () => calls.push({ real: Date.now(), clock: clock() }), clock);
      jest.advanceTimersByTime(450);
      offset = stepMs; // NTP sets the system clock while a call is armed (by a step that is no multiple of the period)
      const stepAtCall = calls.length;
      jest.advanceTimersByTime(650);
      stop();
      const callsAtStop = calls.length;
      jest.advanceTimersByTime(500);
      expect(calls.length).toBe(callsAtStop);
      // Before the step, on the multiples; the call armed before it comes when its timer fires,
      // off the new clock's multiples (as any late call does); from the next one on, on them again.
      for (const c of calls.slice(0, stepAtCall)) expect(c.clock % 100).toBe(0);
      const after = calls.slice(stepAtCall + 1);
      expect(after.length).toBeGreaterThanOrEqual(5);
      for (const c of after) expect(((c.clock % 100) + 100) % 100).toBe(0);
      const gaps = calls.slice(1).map((c, i) => c.real - calls[i]!.real);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(100); // no gap
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(50); // no burst: at least half a period
    } finally {
      jest.useRealTimers();
    }
  });

  it('falls on the multiples even when the clock ticks between its first reads', async () => {
    // A clock that reads 99,950, then whatever the test sets: a millisecond that passed between two
    // reads at the start once put every call of a beat 1 ms before its multiple, for good.
    let t = 99_951;
    let reads = 0;
    const now = () => (reads++ === 0 ? 99_950 : t);
    const calls: number[] = [];
    const stop = everyBeat(100, () => calls.push(t), now);
    try {
      for (const [at, expected] of [
        [99_999, 0],
        [100_000, 1],
        [100_099, 1],
        [100_100, 2],
      ] as const) {
        t = at;
        await sleep(130); // past a timer armed for a whole period by this clock
        expect({ at, calls: calls.length }).toEqual({ at, calls: expected });
      }
    } finally {
      stop();
    }
    expect(calls).toEqual([100_000, 100_100]);
  });

  it('refuses a period that is not above 0', () => {
    expect(() => everyBeat(0, () => {})).toThrow(/above 0 ms/);
    expect(() => everyBeat(Number.NaN, () => {})).toThrow(/above 0 ms/);
  });
});

describe('timerAt', () => {
  it('calls once its clock reaches the instant, however early Node fires its timer, and not after its clear', async () => {
    // A clock 60 ms behind Date.now(): the first timer, set for the remainder by this clock,
    // fires with the clock still short of the instant for as long as Node fires it early; each
    // such firing waits out the rest. Here the clock also stands still for 100 ms.
    let frozenUntil = Date.now() + 100;
    const clock = () => (Date.now() < frozenUntil ? frozenUntil - 160 : Date.now() - 60);
    const due = clock() + 30;
    let calledAt = -1;
    timerAt(due, () => (calledAt = clock()), clock);
    await sleep(400);
    expect(calledAt).toBeGreaterThanOrEqual(due);
    expect(calledAt - due).toBeLessThan(SLACK_MS + 200);
    // A clear before the instant: never called.
    frozenUntil = 0;
    let called = false;
    const clear = timerAt(Date.now() + 50, () => (called = true));
    clear();
    await sleep(120);
    expect(called).toBe(false);
  });

  it('calls when its timer fires if the clock was set back meanwhile, instead of waiting out the step', async () => {
    let offset = 0;
    const clock = () => Date.now() + offset;
    const armedAt = Date.now();
    let calledAfter = -1;
    timerAt(clock() + 100, () => (calledAfter = Date.now() - armedAt), clock);
    await sleep(30);
    offset = -3_600_000;
    await sleep(200);
    expect(calledAfter).toBeGreaterThanOrEqual(90);
    expect(calledAfter).toBeLessThan(100 + SLACK_MS * 2);
  });

  it("waits no longer than maxWaitMs when the clock was set back between the caller's read and its own", () => {
    // Jest's clock: the caller reads the clock, NTP sets it back an hour, timerAt reads it.
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    try {
      let offset = 0;
      const clock = () => Date.now() + offset;
      const due = clock() + 100;
      offset = -3_600_000;
      let calls = 0;
      timerAt(due, () => (calls += 1), clock, 200);
      jest.advanceTimersByTime(199);
      expect(calls).toBe(0);
      jest.advanceTimersByTime(1);
      expect(calls).toBe(1);
      // Without the bound: the step waited out (an hour).
      timerAt(clock() + 100 + 3_600_000, () => (calls += 1), clock);
      jest.advanceTimersByTime(10_000);
      expect(calls).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('everyBeat and a clock set back between two of its reads', () => {
  it.each([
    // The beat's reads: 1 to reckon the first call, 2 to arm it, 3 when its timer fires, 4 after
    // the call to reckon the next, 5 to arm that.
    ['its first two reads', 2],
    ['the read after a call and the next', 5],
  ])('goes on within two periods when the step falls between %s', (_, stepAtRead) => {
    // A beat reads the clock once to reckon its next call, and timerAt reads it again to arm the
    // timer: a step back between the two would arm it for the hour as well (the alarm look and
    // the schedules stopped for an hour).
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    try {
      let reads = 0;
      let offset = 0;
      const clock = () => {
        reads += 1;
        if (reads === stepAtRead) offset = -3_600_000; // after the beat's read, before timerAt's
        return Date.now() + offset;
      };
      const calls: number[] = [];
      const stop = everyBeat(100, () => calls.push(Date.now()), clock);
      jest.advanceTimersByTime(1000);
      stop();
      expect(offset).toBe(-3_600_000); // the step came where the case says
      expect(calls.length).toBeGreaterThanOrEqual(8);
      const gaps = [calls[0]! - 1_700_000_000_000, ...calls.slice(1).map((t, i) => t - calls[i]!)];
      expect(Math.max(...gaps)).toBeLessThanOrEqual(200);
    } finally {
      jest.useRealTimers();
    }
  });
});
