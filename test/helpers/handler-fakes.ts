// Test helper: fakes for handler tests (a recording outbox, a link that says how a message travels, a fixed clock).
import type { ServiceStores } from '../../db/service-stores';
import type { SorterLink } from '../../lib/link/sorter-link-status';
import type { OutboundMessage } from '../../model/messages';

/** An outbox that remembers what it was given, or refuses every write with `refuse` as the reason. */
export function fakeOutbox(refuse?: string): Pick<ServiceStores['outbox'], 'addToOutbox' | 'depth'> & {
  added: Array<{ message: OutboundMessage; client: string | null; at: string; cancelAfterMs?: number }>;
} {
  const added: Array<{ message: OutboundMessage; client: string | null; at: string; cancelAfterMs?: number }> = [];
  return {
    added,
    async addToOutbox(message, client, at, options) {
      if (refuse) return { written: false, reason: refuse };
      added.push({ message, client, at, cancelAfterMs: options?.cancelAfterMs });
      return { written: true, value: added.length };
    },
    depth: () => added.length,
  };
}

/** A link that says how an entry travels, and (`refusal`) what its layout cannot carry. */
export const link = (delivery: 'Sent' | 'Queued', refusal: string | null = null): SorterLink => ({
  status: () => ({
    Connected: delivery === 'Sent',
    Address: 'plc:2000',
    Since: null,
    LastTelegramIn: null,
    LastTelegramOut: null,
    State: delivery === 'Sent' ? 'Connected' : 'Disconnected',
    RefusingBecause: null,
  }),
  recentTelegrams: () => [],
  offer: () => delivery,
  acknowledgesPromptly: () => false,
  encode: () => (refusal === null ? null : { telegram: null, refused: refusal }),
  start: () => {},
  stop: async () => {},
});
export const clock = () => new Date('2026-11-21T12:00:00.000Z');
export const settings = { CommitTimeoutMs: 2000, DurableBySorterAck: true };
