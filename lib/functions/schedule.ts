// The schedule triggers: a node-cron job per scheduled function in the manifest.
import cron from 'node-cron';
import { loadScheduledFunction } from './define';
import type { Manifest } from './manifest';
import { scheduleTriggers } from './manifest';
import type { Deps } from '../deps';

/** Start a node-cron job for every schedule trigger in the manifest whose function the settings switch on; returns a stopper. */
export function startSchedules(manifest: Manifest, deps: Deps): () => void {
  const tasks = scheduleTriggers(manifest).flatMap(({ name, fn, cron: expression }) => {
    const f = loadScheduledFunction(fn.handler);
    if (f.runsWhen && !f.runsWhen(deps)) return [];
    return cron.schedule(
      expression,
      async () => {
        try {
          if (!f.light) deps.eventLoop.busy();
          await f.invoke(deps, fn.input ?? {});
        } catch (err) {
          deps.log.error({ err, function: name }, `scheduled function ${name} failed`);
        }
      },
      { name, noOverlap: true },
    );
  });
  return () => tasks.forEach((t) => t.stop());
}
