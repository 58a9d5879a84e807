import type { Request, RouteOptions } from '@hapi/hapi';
import type Joi from 'joi';
import { clientAddress, goneWatch } from './http';
import {
  assignmentAck,
  assignmentBody,
  destinationAck,
  destinationBody,
  destinationInfoDto,
  errorDto,
  inductDto,
  statusDto,
  timeOutQuery,
  verifyDto,
} from './schemas';

/** How one handler is reached over HTTP: its validation, its documentation, and its event. */
export interface HttpBinding {
  query?: Joi.ObjectSchema;
  payload?: Joi.ObjectSchema;
  notes: string[];
  /** Documented responses; may depend on the function's fixed input (which queue). */
  responses(input: Record<string, unknown>): Record<number, { description: string; schema?: Joi.Schema }>;
  event(request: Request, input: Record<string, unknown>): unknown;
}

const badRequest = { description: 'Bad request: the message names the field', schema: errorDto };
const unauthorized = { description: 'ApiKeys is configured and X-API-Key is missing or wrong', schema: errorDto };

const postErrors = {
  400: badRequest,
  401: unauthorized,
  413: { description: 'Body larger than MaxPayloadBytes', schema: errorDto },
  415: { description: 'Content-Type is not application/json', schema: errorDto },
};

const postEvent = (request: Request) => ({ body: request.payload, clientAddress: clientAddress(request) });

const postNotes = [
  'The body is written to the outbox before this answer, so an acknowledged message survives a crash or power cut; it is forwarded to the sorter in order and leaves the outbox when the sorter acknowledges it.',
  'In test mode nothing is written or sent (Delivery "NotSent").',
];

/** HTTP bindings by handler name (the names manifest.json uses). */
export const httpBindings: Record<string, HttpBinding> = {
  'handlers/status.getStatus': {
    notes: ['Counters "Sortation Q" and "Destination Q" are the messages waiting in each queue.'],
    responses: () => ({ 200: { description: 'Status', schema: statusDto }, 401: unauthorized }),
    event: () => ({}),
  },
  'handlers/dequeue.dequeue': {
    query: timeOutQuery,
    notes: [
      'Returns at most one message. It leaves the queue only once the response has been handed to your connection; if you disconnect first it stays at the head of the queue.',
      'Competing long polls are served in the order they started waiting.',
      'timeOut: truncated to whole seconds, clamped to 0..30; omitted = DefaultTimeOut (default 0, an immediate check). Not a number: 400.',
      'Delivery AtLeastOnce (default): a message leaves its queue once the service has proof that you read it (your next request on the same kept-alive connection, or a clean close of the connection); otherwise it is delivered again. Headers X-Message-Id and X-Delivery-Attempt (2 or more: possibly a duplicate) help you deduplicate.',
      'After a crash a message that was being handed out may be delivered again (at-least-once).',
      'HEAD answers 204 and never takes a message.',
    ],
    responses: (input) => ({
      ...(input.queue === 'sortation'
        ? {
            210: { description: 'REQUEST: answer with POST /sortation', schema: inductDto },
            212: { description: 'VERIFY: no answer required', schema: verifyDto },
          }
        : { 211: { description: 'SCAN', schema: destinationInfoDto } }),
      204: { description: 'No message within timeOut (empty body)' },
      400: badRequest,
      401: unauthorized,
    }),
    // hapi answers HEAD with the GET route: a HEAD must not take a message (its response has no body).
    event: (request, input) => ({ ...input, timeOut: request.query.timeOut, gone: goneWatch(request), probe: request.method === 'head' }),
  },
  'handlers/assignment.postAssignment': {
    payload: assignmentBody,
    notes: ['TrackID and Destination are required non-empty strings; Barcode and Type are optional.', ...postNotes],
    responses: () => ({ 200: { description: 'Acknowledged', schema: assignmentAck }, ...postErrors }),
    event: postEvent,
  },
  'handlers/destination-settings.postDestinationSettings': {
    payload: destinationBody,
    notes: [
      'Enum fields parse case-insensitively; a value that does not parse (or is missing) takes the default (DestinationStatus NotReady, LightStatus Off, LightColor Off), is listed in DefaultsApplied, and is not an error.',
      ...postNotes,
    ],
    responses: () => ({ 200: { description: 'Acknowledged', schema: destinationAck }, ...postErrors }),
    event: postEvent,
  },
};

/** The tag a path is grouped under in Swagger. */
export const tagOf = (path: string) => path.replace(/^\//, '') || 'service';

/** hapi route options for a binding: validation, case-insensitive keys, Swagger docs. */
export function routeOptions(binding: HttpBinding, input: Record<string, unknown>, description: string, path: string, extra: Partial<RouteOptions>): RouteOptions {
  return {
    ...extra,
    description,
    notes: binding.notes,
    tags: ['api', tagOf(path)],
    validate: { ...(binding.query && { query: binding.query }), ...(binding.payload && { payload: binding.payload }), ...extra.validate },
    plugins: { 'hapi-swagger': { responses: binding.responses(input) } },
  };
}
