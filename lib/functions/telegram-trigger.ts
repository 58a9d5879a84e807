// The telegram trigger: each data telegram type from the sorter runs the function manifest.json
// binds to it, as the HTTP trigger runs a route's function and the schedule a cron job's.
import type { Deps } from '../deps';
import type { InboundMessage } from '../link/session-port';
import { RefuseError } from '../link/session-port';
import { NakReason, type TelegramType } from '../telegram/telegram';
import { type TelegramFunction, loadTelegramFunction } from './define';
import { type Manifest, telegramTriggers } from './manifest';

/** What the sorter link calls with a decoded telegram: resolves once the function has kept it. */
export type TelegramReceiver = (type: TelegramType, event: InboundMessage) => Promise<void>;

/**
 * The receiver for a manifest's telegram triggers. `deps` is read at each telegram: the service's
 * deps hold the link, which is built with this receiver.
 */
export function telegramTrigger(manifest: Manifest, deps: () => Deps): TelegramReceiver {
  const byType = new Map<TelegramType, TelegramFunction>(
    telegramTriggers(manifest).flatMap(({ fn, types }) => types.map((type) => [type, loadTelegramFunction(fn.handler)] as const)),
  );
  return async (type, event) => {
    const f = byType.get(type);
    if (!f) throw new RefuseError(NakReason.UNEXPECTED, `no function takes ${type} (manifest.json)`);
    const d = deps();
    d.eventLoop.busy();
    await f.invoke(d, event);
  };
}
