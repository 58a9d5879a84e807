// The schedule triggers: a node-cron job per scheduled function in the manifest.
import cron from 'node-cron';
import { loadScheduledFunction } from './define';
import type { Manifest } from './manifest';
import { scheduleTriggers } from './manifest';
import type { Deps } from '../deps';

/** Start a node-cron job for every schedule trigger in the manifest; returns a stopper. */
export function startSchedules(manifest: Manifest, deps: Deps): () => void {
  const tasks = scheduleTriggers(manifest).map(({ name, fn, cron: expression }) => {
    const f = loadScheduledFunction(fn.handler);
    return cron.schedule(
      expression,
      async () => {
        try {
          deps.eventLoop.busy();
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
