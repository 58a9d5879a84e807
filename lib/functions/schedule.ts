// The schedule triggers: a job per scheduled function in the manifest. Schedules of every N
// seconds run on the beat (lib/host/beat.ts), the rest through node-cron.
import cron from 'node-cron';
import { loadScheduledFunction } from './define';
import type { Manifest } from './manifest';
import { scheduleTriggers } from './manifest';
import type { Deps } from '../deps';
import { everyBeat } from '../host/beat';

/**
 * The period in seconds of a cron expression that fires every N seconds, N a divisor of a
 * minute (`* * * * * *`, `*\/5 * * * * *`); undefined for any other. Its runs fall on the wall
 * clock's multiples of N seconds, the same instants as node-cron's, so the beat can run them and
 * let them share a wake-up with the service's other periodic work (the alarm look every 2 s):
 * node-cron's own timer comes a millisecond or two apart from the beat's and wakes the process
 * once more.
 */
export function everySeconds(expression: string): number | undefined {
  const match = /^\*(?:\/(\d+))? \* \* \* \* \*$/.exec(expression.trim());
  if (!match) return undefined;
  const n = match[1] === undefined ? 1 : Number(match[1]);
  return n >= 1 && 60 % n === 0 ? n : undefined;
}

/** Start a job for every schedule trigger in the manifest whose function the settings switch on; returns a stopper. */
export function startSchedules(manifest: Manifest, deps: Deps): () => void {
  const stoppers = scheduleTriggers(manifest).flatMap(({ name, fn, cron: expression }) => {
    const f = loadScheduledFunction(fn.handler);
    if (f.runsWhen && !f.runsWhen(deps)) return [];
    const run = async () => {
      try {
        if (!f.light) deps.eventLoop.busy();
        await f.invoke(deps, fn.input ?? {});
      } catch (err) {
        deps.log.error({ err, function: name }, `scheduled function ${name} failed`);
      }
    };
    const seconds = everySeconds(expression);
    if (seconds === undefined) {
      const task = cron.schedule(expression, run, { name, noOverlap: true });
      return [() => void task.stop()];
    }
    // As node-cron's noOverlap: a run still going when the next is due skips that one.
    let running = false;
    return [
      everyBeat(seconds * 1000, () => {
        if (running) return;
        running = true;
        void run().finally(() => (running = false));
      }),
    ];
  });
  return () => stoppers.forEach((stop) => stop());
}
