// What every HTTP function shares: documented error responses, the notes of the two POSTs, and
// the hapi route options a function's binding becomes (lib/http/server.ts).
import type { RouteOptions } from '@hapi/hapi';
import Joi from 'joi';
import type { FunctionInput, HttpBinding } from '../functions/define';
import { absentKeysValidator, memoizedValidator, plainKeysValidator } from './input-validators';

/** An error body as the service sends it, with an example of its own (a model per kind of error). */
export const errorDto = (label: string, statusCode: number, error: string, message: string) =>
  Joi.object({
    statusCode: Joi.number().integer().required().example(statusCode),
    error: Joi.string().required().example(error),
    message: Joi.string().required().example(message),
  })
    .unknown(true)
    .label(label);

/** 401: the API key is missing or wrong. */
export const unauthorized = {
  description: 'ApiKeys is configured and X-API-Key is missing or unknown',
  schema: errorDto('UnauthorizedError', 401, 'Unauthorized', 'missing X-API-Key header'),
};

/** 403: the key is known, but its role may not call this route. */
export const forbidden = {
  description: 'ApiKeys is configured and the key\'s role may not call this route (docs/operations.md, "Who may do what")',
  schema: errorDto(
    'ForbiddenError',
    403,
    'Forbidden',
    '/sortation needs a key with the wcs role; the key shift-lead has the operator role',
  ),
};

/** 400 for a query or body that does not validate; the example is the route's own. */
export const badRequest = (label: string, message: string) => ({
  description: 'Bad request: the message names the field',
  schema: errorDto(label, 400, 'Bad Request', message),
});

/** The errors both POSTs document, with the route's own 400 example. */
export const postErrors = (badRequestLabel: string, badRequestMessage: string) => ({
  400: badRequest(badRequestLabel, badRequestMessage),
  401: unauthorized,
  413: {
    description: 'Body larger than MaxPayloadBytes',
    schema: errorDto('PayloadTooLargeError', 413, 'Request Entity Too Large', 'Payload content length greater than maximum allowed: 16384'),
  },
  415: {
    description: 'Content-Type is not application/json',
    schema: errorDto('UnsupportedMediaTypeError', 415, 'Unsupported Media Type', 'Unsupported Media Type'),
  },
  503: {
    description:
      'The storage did not take the write within CommitTimeoutMs (a lock, a stalled or failing disk): nothing was written, send it again after Retry-After',
    schema: errorDto(
      'StorageUnavailableError',
      503,
      'Service Unavailable',
      'not accepted, nothing was written, send it again: outbox-add not written: the storage did not start it within 2000 ms',
    ),
  },
});

/** The notes both POSTs document: the write before the answer, and test mode. */
export const postNotes = [
  'The body is written to the outbox before this answer, so an acknowledged message survives a crash or power cut; it is forwarded to the sorter in order and leaves the outbox when the sorter acknowledges it.',
  'In test mode nothing is written or sent (Delivery "NotSent").',
];

/** The tag a path is grouped under in Swagger. */
export const tagOf = (path: string) => path.replace(/^\//, '') || 'service';

/** hapi route options for a binding: validation, case-insensitive keys, Swagger docs. */
export function routeOptions(
  binding: Omit<HttpBinding<unknown>, 'event'>,
  input: FunctionInput,
  description: string,
  path: string,
  extra: Partial<RouteOptions>,
): RouteOptions {
  return {
    ...extra,
    description,
    notes: binding.notes,
    tags: binding.undocumented ? [tagOf(path)] : ['api', tagOf(path)],
    // The query, headers and body by validators that give joi's answer without running joi on
    // every request (lib/http/input-validators.ts); Swagger documents the joi schemas themselves.
    validate: {
      ...(binding.params && { params: binding.params }),
      ...(binding.query && { query: memoizedValidator(binding.query) }),
      ...(binding.headers && { headers: absentKeysValidator(binding.headers) }),
      ...(binding.payload && { payload: plainKeysValidator(binding.payload) }),
      ...extra.validate,
    },
    plugins: {
      'hapi-swagger': {
        responses: { ...binding.responses(input), 403: forbidden },
        validate: {
          ...(binding.query && { query: binding.query }),
          ...(binding.headers && { headers: binding.headers }),
          ...(binding.payload && { payload: binding.payload }),
        },
      },
    },
  };
}
