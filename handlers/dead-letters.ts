// GET /dead-letters: the messages that left their queue after MaxDeliveries deliveries without
// proof of the read, for the operator who decides what becomes of them.
import type { DeadLetterReads } from '../db/dead-letter-store';
import { type HandlerResult, httpFunction, ok } from '../lib/functions/define';
import type { QueueName } from '../model/messages';
import { badRequest, unauthorized } from '../lib/http/routes';
import { deadLetterListDto, deadLetterQuery } from '../lib/http/ops-schemas';

/** What the listing needs: the dead-letter reads. */
export interface DeadLettersDeps {
  deadLetters: DeadLetterReads;
}

/** Which dead letters: of one queue or both, at most `limit`. */
export interface DeadLettersEvent {
  queue?: QueueName;
  limit: number;
}

/** The counts per queue and the oldest dead letters, each with its message. */
export function listDeadLetters(deps: DeadLettersDeps, event: DeadLettersEvent): HandlerResult {
  const counts = deps.deadLetters.deadLetterCounts();
  return ok({
    Counts: { 'Sortation Q': counts.sortation, 'Destination Q': counts.destination },
    DeadLetters: deps.deadLetters.listDeadLetters(event.limit, event.queue),
  });
}

export const fn = httpFunction(listDeadLetters, {
  query: deadLetterQuery,
  notes: [
    'A message handed out MaxDeliveries times (default 10) without proof that a client read it leaves its queue for the dead letters, so that the queue moves on; nothing is lost. Each one says which client had it last and how its last delivery ended.',
    'POST /dead-letters/requeue sends dead letters back to their queues. Operators can read the table dead_letters with sqlite3 too (docs/queue-semantics.md, "Dead letters").',
  ],
  responses: () => ({
    200: { description: 'The dead letters, oldest first', schema: deadLetterListDto },
    400: badRequest('DeadLetterQueryBadRequestError', '"queue" must be one of [sortation, destination]'),
    401: unauthorized,
  }),
  event: (request) => ({ queue: request.query.queue as QueueName | undefined, limit: request.query.limit as number }),
});
