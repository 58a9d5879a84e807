import cron from 'node-cron';
import { handlers } from '../handlers';
import type { Manifest } from './manifest';
import { scheduleTriggers } from './manifest';
import type { Deps } from './service';

/** Start a node-cron job for every schedule trigger in the manifest; returns a stopper. */
export function startSchedules(manifest: Manifest, deps: Deps): () => void {
  const tasks = scheduleTriggers(manifest).map(({ name, fn, cron: expression }) => {
    const run = handlers[fn.handler];
    if (!run) throw new Error(`manifest.json: function ${name} names handler ${fn.handler}, which does not exist`);
    return cron.schedule(
      expression,
      async () => {
        try {
          await run(deps, (fn.input ?? {}) as never);
        } catch (err) {
          deps.log.error({ err, function: name }, `scheduled function ${name} failed`);
        }
      },
      { name, noOverlap: true },
    );
  });
  return () => tasks.forEach((t) => t.stop());
}
