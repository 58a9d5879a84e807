// The stale-REQUEST trigger: the functions manifest.json binds to a stale REQUEST at the
// sortation queue's head, as the dispatcher's expiry (lib/queue/dispatcher.ts, StaleExpiry).
import type { Deps } from '../deps';
import type { StaleExpiry } from '../queue/dispatcher';
import { loadScheduledFunction } from './define';
import { type Manifest, staleRequestTriggers } from './manifest';

/**
 * In live mode with MaxRequestAgeSeconds set: a REQUEST received longer ago than that is stale,
 * and the manifest's stale-REQUEST functions take it out (null otherwise, or when the manifest
 * binds none). `deps` is read at each expiry: the service's deps hold the dispatchers, which are
 * built with this expiry.
 */
export function staleRequestExpiry(
  manifest: Manifest,
  settings: { TestMode: boolean; MaxRequestAgeSeconds: number },
  deps: () => Deps,
): StaleExpiry | null {
  if (settings.TestMode || settings.MaxRequestAgeSeconds <= 0) return null;
  const fns = staleRequestTriggers(manifest).map(({ name, fn }) => ({ name, input: fn.input ?? {}, f: loadScheduledFunction(fn.handler) }));
  if (fns.length === 0) return null;
  const maxAgeMs = settings.MaxRequestAgeSeconds * 1000;
  return {
    isStale: (stored, now) => stored.message.Type === 'REQUEST' && Date.parse(stored.receivedAt) < now.getTime() - maxAgeMs,
    expire: async () => {
      const d = deps();
      for (const { name, input, f } of fns) {
        try {
          await f.invoke(d, input);
        } catch (err) {
          d.log.error({ err, function: name }, `function ${name} (a stale REQUEST at the sortation queue's head) failed`);
          throw err;
        }
      }
    },
  };
}
