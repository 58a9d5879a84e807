// GET /sortation and GET /destination: long-poll a queue for one message (210/212/211) or 204.
import type { GoneWatch, QueueDispatcher } from '../lib/queue/dispatcher';
import { empty, type FunctionInput, type HandlerResult, httpFunction } from '../lib/functions/define';
import type { QueueName } from '../model/messages';
import { badRequest, unauthorized } from '../lib/http/routes';
import { ackHeaders, destinationInfoDto, inductDto, timeOutQuery, verifyDto } from '../lib/http/message-schemas';

/** What dequeue needs. */
export interface DequeueDeps {
  dispatchers: { [Q in QueueName]: QueueDispatcher<Q> };
  settings: { DefaultTimeOut: number };
  deliveries: { acknowledge(queue: QueueName, ids: readonly number[]): number };
  /** Told of every GET (the WCS_NOT_POLLING alarms). */
  alarms?: { polled(queue: QueueName): void };
}

/** A GET on a queue: which queue, the raw `timeOut`, and how to learn that the client left. */
export interface DequeueEvent {
  queue: QueueName;
  timeOut?: number;
  gone?: GoneWatch;
  /** A HEAD request (a monitoring probe): it has no body to carry a message, so it never takes one. */
  probe?: boolean;
  /** X-Ack: ids of messages of this queue the client has read (taken with X-Ack-Mode explicit). */
  ack?: number[];
  /** X-Ack-Mode explicit: the message returned waits for the client's acknowledgement. */
  explicitAck?: boolean;
}

/** Seconds to wait: truncated to whole seconds, clamped to 0..30; omitted means the configured default. */
export function waitSeconds(timeOut: number | undefined, defaultTimeOut: number): number {
  const t = Math.trunc(timeOut ?? defaultTimeOut);
  return Math.min(30, Math.max(0, t));
}

/** Long-poll one queue: the next message (210/211/212 once written), or empty (204) after the wait. */
export async function dequeue(deps: DequeueDeps, event: DequeueEvent): Promise<HandlerResult> {
  if (event.ack?.length) deps.deliveries.acknowledge(event.queue, event.ack);
  if (event.probe) return empty;
  deps.alarms?.polled(event.queue);
  const seconds = waitSeconds(event.timeOut, deps.settings.DefaultTimeOut);
  const claim = await deps.dispatchers[event.queue].take(seconds * 1000, event.gone);
  return claim ? { kind: 'message', claim, explicitAck: event.explicitAck === true } : empty;
}

/** The ids of an X-Ack header (validated by ackHeaders). */
const ackIds = (header: unknown): number[] | undefined =>
  typeof header === 'string' ? header.split(',').map((id) => Number(id.trim())) : undefined;

/** The queue a manifest function serves (its fixed input). */
function queueOf(input: FunctionInput): QueueName {
  if (input.queue === 'sortation' || input.queue === 'destination') return input.queue;
  throw new Error(`manifest.json: a dequeue function needs input.queue "sortation" or "destination", not ${JSON.stringify(input.queue)}`);
}

export const fn = httpFunction(dequeue, {
  query: timeOutQuery,
  headers: ackHeaders,
  notes: [
    'Returns at most one message. It leaves the queue only once the response has been handed to your connection; if you disconnect first it stays at the head of the queue.',
    'Competing long polls are served in the order they started waiting.',
    'timeOut: truncated to whole seconds, clamped to 0..30; omitted = DefaultTimeOut (default 0, an immediate check). Not a number: 400.',
    'Delivery AtLeastOnce (default): a message leaves its queue once the service has proof that you read it (your next request on the same kept-alive connection, or a clean close of the connection); otherwise it is delivered again. Headers X-Message-Id and X-Delivery-Attempt (2 or more: possibly a duplicate) help you deduplicate.',
    'After a crash a message that was being handed out may be delivered again (at-least-once).',
    'Behind a proxy, the connection proves only that the proxy read the response: send X-Ack-Mode explicit and acknowledge with X-Ack (docs/queue-semantics.md).',
    'A message handed out MaxDeliveries times (default 10) without proof of the read leaves the queue for the dead letters (GET /dead-letters).',
    'HEAD answers 204 and never takes a message (with X-Ack it acknowledges).',
  ],
  responses: (input) => ({
    ...(queueOf(input) === 'sortation'
      ? {
          210: { description: 'REQUEST: answer with POST /sortation', schema: inductDto },
          212: { description: 'VERIFY: no answer required', schema: verifyDto },
        }
      : { 211: { description: 'SCAN', schema: destinationInfoDto } }),
    204: { description: 'No message within timeOut (empty body)' },
    400: badRequest('TimeOutBadRequestError', '"timeOut" must be a number'),
    401: unauthorized,
  }),
  // hapi answers HEAD with the GET route: a HEAD must not take a message (its response has no body).
  event: (request, input) => ({
    queue: queueOf(input),
    timeOut: typeof request.query.timeOut === 'number' ? request.query.timeOut : undefined,
    gone: request.gone,
    probe: request.method === 'head',
    ack: ackIds(request.headers['x-ack']),
    explicitAck: typeof request.headers['x-ack-mode'] === 'string' && request.headers['x-ack-mode'].toLowerCase() === 'explicit',
  }),
});
