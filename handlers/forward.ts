// What both POSTs share: commit to the outbox (or not, in test mode), then offer to the sorter
// link.
import type { ServiceStores } from '../db/service-stores';
import type { OutboundMessage } from '../model/messages';
import { type HandlerResult, ok, unavailable } from '../lib/functions/results';
import type { SorterLink } from '../lib/link/sorter-link-status';

/** What forwarding a message to the sorter needs. */
export interface ForwardDeps {
  testMode: boolean;
  /** The outbox: `add` resolves once committed, or says why nothing was written. */
  outbox: Pick<ServiceStores['outbox'], 'add'>;
  link: SorterLink;
  clock: () => Date;
  settings: { CommitTimeoutMs: number };
}

/** A field whose value did not parse and took a default instead (listed in the acknowledgement). */
export interface DefaultApplied {
  Field: string;
  Received: unknown;
  Applied: string | null;
}

/**
 * Forward a normalised message to the sorter: committed to the outbox before the answer, so an
 * acknowledged message survives a crash; in test mode nothing is written or sent. If the storage
 * cannot start the write within CommitTimeoutMs (an operator's lock, a stalled disk) or fails,
 * the answer is 503 and nothing was written: the client sends it again. A message the sorter's
 * telegram layout cannot carry (a value wider than its field there) is answered 400 naming the
 * field, and nothing is written: it could never be sent.
 */
export async function forward(deps: ForwardDeps, message: OutboundMessage, clientAddress: string | null, defaults: DefaultApplied[]): Promise<HandlerResult> {
  if (deps.testMode) return ok({ Accepted: true, Delivery: 'NotSent', OutboxID: null, Message: message.body, DefaultsApplied: defaults });
  const refused = deps.link.refuses(message);
  if (refused) return ok({ statusCode: 400, error: 'Bad Request', message: refused }, 400);
  const createdAt = deps.clock().toISOString();
  const added = await deps.outbox.add(message, clientAddress, createdAt, { cancelAfterMs: deps.settings.CommitTimeoutMs });
  if (!added.written) return unavailable(`not accepted, nothing was written, send it again: ${added.reason}`);
  const delivery = deps.link.offer({ id: added.value, message, createdAt });
  return ok({ Accepted: true, Delivery: delivery, OutboxID: added.value, Message: message.body, DefaultsApplied: defaults });
}
