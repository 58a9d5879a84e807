// What both POSTs share: commit to the outbox (or not, in test mode), then offer to the sorter
// link.
import type { ServiceStores } from '../../db/service-stores';
import type { DeliveryState, OutboundMessage } from '../../model/messages';
import { type HandlerResult, ok, unavailable } from './define';
import type { SorterLink } from '../link/sorter-link-status';
import type { StoredAges } from '../queue/arrivals';

/** What forwarding a message to the sorter needs. */
export interface ForwardDeps {
  testMode: boolean;
  /** The outbox: `addToOutbox` resolves once committed, or says why nothing was written. */
  outbox: Pick<ServiceStores['outbox'], 'addToOutbox'>;
  link: SorterLink;
  clock: () => Date;
  /** When each entry arrived, on the clock that never steps (OUTBOX_UNACKNOWLEDGED, the oldest entry's age). */
  ages: Pick<StoredAges, 'arrived' | 'now'>;
  settings: { CommitTimeoutMs: number; DurableBySorterAck: boolean };
}

/** A field whose value did not parse and took a default instead (listed in the acknowledgement). */
export interface DefaultApplied {
  Field: string;
  Received: unknown;
  Applied: string | null;
}

/**
 * Forward a normalised message to the sorter: committed to the outbox before the answer, so an
 * acknowledged message survives a crash; in test mode nothing is written or sent. With
 * DurableBySorterAck, while the link acknowledges promptly, the entry is committed without a
 * sync, sent at once, and answered once the sorter acknowledged it or a sync made it durable,
 * whichever comes first: either way it survives a power cut (docs/reliability.md). If the storage
 * cannot start the write within CommitTimeoutMs (an operator's lock, a stalled disk) or fails,
 * the answer is 503 and nothing was written: the client sends it again. A message the sorter's
 * telegram layout cannot carry (a value wider than its field there) is answered 400 naming the
 * field, and nothing is written: it could never be sent.
 */
export async function forward(
  deps: ForwardDeps,
  message: OutboundMessage,
  clientAddress: string | null,
  defaults: DefaultApplied[],
): Promise<HandlerResult> {
  if (deps.testMode) return ok({ Accepted: true, Delivery: 'NotSent', OutboxID: null, Message: message.body, DefaultsApplied: defaults });
  const encoded = deps.link.encode(message);
  if (encoded?.refused) return ok({ statusCode: 400, error: 'Bad Request', message: encoded.refused }, 400);
  const telegram = encoded?.telegram ?? undefined;
  const createdAt = deps.clock().toISOString();
  const arrivedAt = deps.ages.now();
  const beforeSync = deps.settings.DurableBySorterAck && deps.link.acknowledgesPromptly();
  const added = await deps.outbox.addToOutbox(message, clientAddress, createdAt, {
    cancelAfterMs: deps.settings.CommitTimeoutMs,
    beforeSync,
  });
  if (!added.written) return unavailable(`not accepted, nothing was written, send it again: ${added.reason}`);
  deps.ages.arrived('outbox', added.value, arrivedAt);
  const entry = { id: added.value, message, createdAt };
  const answer = (delivery: DeliveryState) =>
    ok({ Accepted: true, Delivery: delivery, OutboxID: added.value, Message: message.body, DefaultsApplied: defaults });
  const { unsynced } = added;
  if (!unsynced) return answer(deps.link.offer(entry, undefined, telegram));
  let acknowledged!: () => void;
  const sorter = { acknowledged: false };
  const sorterHasIt = new Promise<void>((resolve) => (acknowledged = resolve));
  const delivery = deps.link.offer(
    entry,
    () => {
      sorter.acknowledged = true;
      unsynced.durableElsewhere();
      acknowledged();
    },
    telegram,
  );
  try {
    await Promise.race([sorterHasIt, unsynced.durable]);
  } catch (err) {
    return unavailable(
      `not accepted: the storage failed before the entry was durable, and the sorter has not acknowledged it (it may still reach the sorter); send it again: ${(err as Error).message}`,
    );
  }
  // Queued behind others when offered, and acknowledged by now: it went out.
  return answer(sorter.acknowledged ? 'Sent' : delivery);
}
