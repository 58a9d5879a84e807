import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, ResponseObject, Lifecycle } from '@hapi/hapi';
import type Joi from 'joi';
import type { Claim } from './dispatcher';
import type { HandlerResult } from './results';

/** The spec's status code for each message type: it names the category at HTTP level. */
export const MessageStatusCode = { REQUEST: 210, VERIFY: 212, SCAN: 211 } as const;
const ReasonPhrase = { REQUEST: 'Request', VERIFY: 'Verify', SCAN: 'Scan' } as const;

/** The client's address as recorded in the delivery history. */
export const clientAddress = (request: Request): string | null => request.info.remoteAddress || null;

/**
 * The one place handler results become HTTP. A message is committed (removed from its
 * queue) only when its response has been handed to the client's connection ('finish');
 * if the connection closes first, the message goes back to the head of its queue.
 */
export function reply(request: Request, h: ResponseToolkit, result: HandlerResult): ResponseObject {
  switch (result.kind) {
    case 'ok':
      return h.response(result.body).code(200);
    case 'empty':
      return h.response().code(204);
    case 'message': {
      const type = result.claim.stored.message.Type;
      const code = MessageStatusCode[type];
      bindClaimToResponse(request, result.claim, code);
      return h.response(result.claim.stored.message).code(code).message(ReasonPhrase[type]);
    }
  }
}

function bindClaimToResponse(request: Request, claim: Claim, code: number): void {
  const res = request.raw.res;
  if (res.destroyed || res.writableEnded) {
    claim.release();
    return;
  }
  res.once('finish', () => {
    // Something after the handler may have turned this into an error response: then the
    // client did not get the message and it must stay queued.
    if (res.statusCode === code) claim.commit({ deliveredAt: new Date().toISOString(), clientAddress: clientAddress(request) });
    else claim.release();
  });
  res.once('close', () => claim.release()); // no-op after a commit
}

/** An AbortSignal that fires if the client's connection closes before its response is written. */
export function disconnectSignal(request: Request): AbortSignal {
  const controller = new AbortController();
  const res = request.raw.res;
  if (res.destroyed) controller.abort();
  else res.once('close', () => controller.abort());
  return controller.signal;
}

/** Validation errors become 400s that say which field is wrong (hapi hides the detail by default). */
export const validationFailAction: Lifecycle.Method = (_request, _h, err) => {
  throw err ?? Boom.badRequest();
};

/** The key names a schema declares, for case-insensitive binding. */
export function schemaKeys(schema: Joi.ObjectSchema | undefined): string[] {
  const keys = schema?.describe().keys;
  return keys ? Object.keys(keys) : [];
}

/**
 * Rename input keys to the schema's spelling when they match case-insensitively
 * (`trackId` -> `TrackID`). Two spellings of one field is an error naming both.
 */
export function canonicalKeys(input: unknown, keys: string[], source: string): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || keys.length === 0) return input;
  const byLower = new Map(keys.map((k) => [k.toLowerCase(), k]));
  const out: Record<string, unknown> = {};
  const seen = new Map<string, string>();
  for (const [key, value] of Object.entries(input)) {
    const canonical = byLower.get(key.toLowerCase()) ?? key;
    const earlier = seen.get(canonical);
    if (earlier !== undefined) {
      throw Boom.badRequest(`"${canonical}" is given twice in the ${source} (as "${earlier}" and "${key}")`);
    }
    seen.set(canonical, key);
    out[canonical] = value;
  }
  return out;
}
