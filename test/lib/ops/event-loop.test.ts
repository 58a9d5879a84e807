// The event loop's delay, sampled only while the service has work (lib/ops/event-loop.ts).
import { EventLoopWatch, SAMPLE_AFTER_WORK_MS, SAMPLE_RESOLUTION_MS } from '../../../lib/ops/event-loop';

/** Long enough for two samples when the timers are on time (under load: `firstDelay`). */
const SAMPLES = SAMPLE_RESOLUTION_MS * 2.5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const holdLoop = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

/**
 * The first delay the watch reports while it samples (ms): a look after SAMPLES, and if it found
 * nothing, after twice and four times as long (the fake clock keeps the watch sampling). Each look
 * empties the sampler, which then needs two samples to measure one delay; on a busy machine a late
 * sample pushes the sampler's next one later, so two may take longer than SAMPLES. 0 if none of the
 * looks saw anything.
 */
async function firstDelay(watch: EventLoopWatch): Promise<number> {
  for (const wait of [SAMPLES, SAMPLES * 2, SAMPLES * 4]) {
    await sleep(wait);
    const delay = watch.delayP99Ms();
    if (delay > 0) return delay;
  }
  return 0;
}

describe('EventLoopWatch', () => {
  it('sees the event loop held up while there is work, and starts over after each look', async () => {
    const watch = new EventLoopWatch();
    try {
      watch.busy();
      await sleep(SAMPLES);
      watch.delayP99Ms(); // the start's samples
      await sleep(SAMPLES);
      watch.busy();
      holdLoop(SAMPLE_RESOLUTION_MS + 300); // a sample falls due in its first SAMPLE_RESOLUTION_MS
      await sleep(SAMPLE_RESOLUTION_MS / 2);
      expect(watch.delayP99Ms()).toBeGreaterThanOrEqual(250);
      await sleep(SAMPLES);
      expect(watch.delayP99Ms()).toBeLessThan(250);
    } finally {
      watch.stop();
    }
  });

  it('does not sample an idle loop: a second after the last work it stops, and a look finds nothing', async () => {
    let now = 0;
    const watch = new EventLoopWatch(() => now);
    try {
      watch.busy();
      expect(await firstDelay(watch)).toBeGreaterThan(0); // sampling
      now += SAMPLE_AFTER_WORK_MS + 1;
      await sleep(SAMPLE_AFTER_WORK_MS + 50); // the quiet timer fires and finds a second without work
      watch.delayP99Ms(); // the samples before it stopped
      await sleep(SAMPLES);
      expect(watch.delayP99Ms()).toBe(0);
      // Work again: sampled again, and the pause is not taken for a delay.
      watch.busy();
      const delay = await firstDelay(watch);
      expect(delay).toBeGreaterThan(0);
      expect(delay).toBeLessThan(SAMPLE_AFTER_WORK_MS);
    } finally {
      watch.stop();
    }
  });

  it('keeps sampling while work goes on, past the first second', async () => {
    let now = 0;
    const watch = new EventLoopWatch(() => now);
    try {
      watch.busy();
      now += SAMPLE_AFTER_WORK_MS - 100;
      watch.busy(); // more work before the second is over
      await sleep(SAMPLE_AFTER_WORK_MS + 50);
      watch.delayP99Ms();
      expect(await firstDelay(watch)).toBeGreaterThan(0);
    } finally {
      watch.stop();
    }
  });

  it('gives each reader everything since its own last look', async () => {
    const watch = new EventLoopWatch();
    const metrics = watch.reader();
    try {
      watch.busy();
      await sleep(SAMPLES);
      holdLoop(SAMPLE_RESOLUTION_MS + 200); // a sample falls due in its first SAMPLE_RESOLUTION_MS
      await sleep(SAMPLE_RESOLUTION_MS / 2);
      expect(watch.delayP99Ms()).toBeGreaterThanOrEqual(150); // the health check's look ...
      expect(metrics().max).toBeGreaterThanOrEqual(150); // ... leaves the metrics theirs
      expect(metrics().max).toBeLessThan(150);
    } finally {
      watch.stop();
    }
  });
});
