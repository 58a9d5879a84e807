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
 * that fires early waits out the rest. One whose wait the clock has since grown (the system clock
 * set back, by NTP say, while it waited) calls at once: waiting out the step as well would stop
 * the alarm look and the rest for as long as the step (an hour, a month). No wait is longer than
 * `maxWaitMs`: the caller read the clock to reckon `dueMs`, and a step back between that read and
 * this one would otherwise arm the timer for the step as well.
 */
export function timerAt(dueMs: number, fn: () => void, now: () => number = Date.now, maxWaitMs = Infinity): () => void {
  let timer: NodeJS.Timeout;
  let armedMs = 0;
  const arm = () => {
    armedMs = Math.min(maxWaitMs, Math.max(1, dueMs - now()));
    timer = setTimeout(fire, armedMs);
    timer.unref();
  };
  const fire = () => {
    const left = dueMs - now();
    if (left > 0 && left <= armedMs) arm();
    else fn();
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * Call `fn` at each multiple of `periodMs` of the wall clock (`now`, `Date.now()` unless given),
 * from the next one on (timerAt). A call that throws still leaves the next one armed (callers
 * catch and log their own failures); one that comes late (a stalled event loop, or the system
 * clock set forward) skips the multiples it missed rather than catching up; after the clock was
 * set back it goes on at the next multiple of the clock as it is now; either way the next call
 * comes at least half a period later. Returns the stop.
 */
export function everyBeat(periodMs: number, fn: () => void, now: () => number = Date.now): () => void {
  if (!(periodMs > 0)) throw new Error(`a beat needs a period above 0 ms, not ${periodMs}`);
  const start = now(); // read once: a millisecond between two reads would put every call 1 ms early
  let due = start + untilBeat(start, periodMs, 1);
  // A call is due at most one and a half periods after the clock was read (the realigned case).
  const longest = 2 * periodMs;
  let stopped = false;
  const run = () => {
    try {
      fn();
    } finally {
      const at = now();
      due += periodMs;
      // Realigned, at least half a period on: a call that came more than half a period late (a
      // busy machine, a stalled event loop) would otherwise be followed at once by the next; and a
      // timer Node fired a little early calls fn for the multiple it was armed for, which the clock
      // as it now reads (set, or read early) may put just ahead.
      if (due - at < periodMs / 2 || due - at > periodMs) due = at + untilBeat(at, periodMs, periodMs / 2);
      if (!stopped) clear = timerAt(due, run, now, longest);
    }
  };
  let clear = timerAt(due, run, now, longest);
  return () => {
    stopped = true;
    clear();
  };
}
