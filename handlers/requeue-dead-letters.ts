// POST /dead-letters/requeue: dead letters go back to their queues, in their old places.
import type { DeadLetterWrites } from '../db/dead-letter-store';
import { WriteCancelled, WriteFailed } from '../db/writer';
import type { QueueDispatcher } from '../lib/queue/dispatcher';
import { type HandlerResult, httpFunction, ok, unavailable } from '../lib/functions/define';
import type { QueueName } from '../model/messages';
import { badRequest, unauthorized } from '../lib/http/routes';
import { requeueAck, requeueBody } from '../lib/http/ops-schemas';
import type { Logger } from '../lib/process/logger';

/** What sending dead letters back needs: the write, and the dispatchers to wake (and to tell the attempts so far). */
export interface RequeueDeps {
  deadLetters: {
    requeueDeadLetters(
      ...args: Parameters<DeadLetterWrites['requeueDeadLetters']>
    ): Promise<ReturnType<DeadLetterWrites['requeueDeadLetters']>>;
  };
  dispatchers: { [Q in QueueName]: Pick<QueueDispatcher<Q>, 'requeued'> };
  /** Who sent what back is logged (the key's name, never the key). */
  log?: Pick<Logger, 'info'>;
}

/** Which dead letters: by id, or all. */
export interface RequeueEvent {
  body: { Ids?: number[]; All?: boolean };
  /** The API key's name, or null without ApiKeys. */
  caller?: string | null;
  clientAddress?: string | null;
}

/**
 * Back under their old ids, so at their old places in FIFO order. Their next delivery carries the
 * next attempt number (a possible duplicate), and MaxDeliveries counts anew.
 */
export async function requeueDeadLetters(deps: RequeueDeps, event: RequeueEvent): Promise<HandlerResult> {
  let moved;
  try {
    moved = await deps.deadLetters.requeueDeadLetters(event.body.All ? null : (event.body.Ids ?? []));
  } catch (err) {
    if (err instanceof WriteCancelled || err instanceof WriteFailed) return unavailable(`nothing was sent back, try again: ${err.message}`);
    throw err;
  }
  for (const m of moved) deps.dispatchers[m.queue].requeued(m.messageId, m.attempts);
  const by = event.caller ?? `address ${event.clientAddress ?? 'unknown'}`;
  deps.log?.info(
    { requeued: moved.length, by, all: event.body.All === true },
    `${moved.length} dead letters sent back to their queues by ${by}`,
  );
  return ok({ Requeued: moved.length, Messages: moved.map((m) => ({ Queue: m.queue, MessageId: m.messageId })) });
}

export const fn = httpFunction(requeueDeadLetters, {
  payload: requeueBody,
  notes: [
    'Sends dead letters (GET /dead-letters) back to their queues under their old X-Message-Id, so at their old places: { "Ids": [3, 4] } or { "All": true }. Unknown ids are skipped.',
    'Fix the client first (docs/queue-semantics.md, "Dead letters"): a message that is again handed out MaxDeliveries times without proof goes back to the dead letters.',
  ],
  responses: () => ({
    200: { description: 'Sent back', schema: requeueAck },
    400: badRequest('RequeueBadRequestError', 'give "Ids" (the dead letters to send back) or "All": true'),
    401: unauthorized,
  }),
  event: (request) => ({
    body: request.payload as RequeueEvent['body'],
    caller: request.caller ?? null,
    clientAddress: request.clientAddress,
  }),
});
