// Periodic work on shared instants. Each thing an idle service does now and then (the alarm look,
// the dashboard's sample, the change watcher's look) runs at the wall clock's multiples of its
// period, so that those of the same period, or of periods that divide each other, wake the process
// once between them rather than once each. On a small box a wake-up costs more than the work it
// does: the caches have gone cold since the last one (docs/performance.md, "Idle").

/** Ms from `nowMs` to the first multiple of `periodMs` at least `minMs` later. */
export function untilBeat(nowMs: number, periodMs: number, minMs = 0): number {
  const from = nowMs + minMs;
  return minMs + periodMs - (((from % periodMs) + periodMs) % periodMs || periodMs);
}

/**
 * Call `fn` once at `dueMs` of the wall clock (`now`, `Date.now()` unless given), on a timer that
 * does not keep the process alive; returns its clear. Node counts a timer from the time its event
 * loop last read the clock, which is behind by whatever ran since (a few ms in a cold wake-up):
 * such a timer fires early, and would fire apart from another one due at the same instant. One
 * that fires early waits out the rest.
 */
export function timerAt(dueMs: number, fn: () => void, now: () => number = Date.now): () => void {
  let timer: NodeJS.Timeout;
  const arm = () => {
    timer = setTimeout(fire, Math.max(1, dueMs - now()));
    timer.unref();
  };
  const fire = () => (now() < dueMs ? arm() : fn());
  arm();
  return () => clearTimeout(timer);
}

/**
 * Call `fn` at each multiple of `periodMs` of the wall clock, from the next one on (timerAt).
 * A call that throws still leaves the next one armed (callers catch and log their own failures);
 * one that comes late (a stalled event loop) skips the multiples it missed rather than catching
 * up. Returns the stop.
 */
export function everyBeat(periodMs: number, fn: () => void): () => void {
  if (!(periodMs > 0)) throw new Error(`a beat needs a period above 0 ms, not ${periodMs}`);
  let due = Date.now() + untilBeat(Date.now(), periodMs, 1);
  let stopped = false;
  const run = () => {
    try {
      fn();
    } finally {
      const now = Date.now();
      due += periodMs;
      if (due <= now) due = now + untilBeat(now, periodMs, 1);
      if (!stopped) clear = timerAt(due, run);
    }
  };
  let clear = timerAt(due, run);
  return () => {
    stopped = true;
    clear();
  };
}
