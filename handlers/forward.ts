import type { OutboxStore } from '../db/outbox-store';
import type { OutboundMessage } from '../lib/messages';
import { type HandlerResult, ok } from '../lib/results';
import type { SorterLink } from '../lib/sorter-link';

/** What forwarding a message to the sorter needs. */
export interface ForwardDeps {
  testMode: boolean;
  outbox: OutboxStore;
  link: SorterLink;
  clock: () => Date;
  /** Run a write durably; resolves once it is committed (group commit). */
  commit: <T>(fn: () => T) => Promise<T>;
}

/** A field whose value did not parse and took a default instead (listed in the acknowledgement). */
export interface DefaultApplied {
  Field: string;
  Received: unknown;
  Applied: string | null;
}

/**
 * Forward a normalised message to the sorter: committed to the outbox before the answer, so an
 * acknowledged message survives a crash; in test mode nothing is written or sent.
 */
export async function forward(deps: ForwardDeps, message: OutboundMessage, clientAddress: string | null, defaults: DefaultApplied[]): Promise<HandlerResult> {
  if (deps.testMode) return ok({ Accepted: true, Delivery: 'NotSent', OutboxID: null, Message: message.body, DefaultsApplied: defaults });
  const id = await deps.commit(() => deps.outbox.add(message, clientAddress, deps.clock().toISOString()));
  return ok({ Accepted: true, Delivery: deps.link.offer(id), OutboxID: id, Message: message.body, DefaultsApplied: defaults });
}
