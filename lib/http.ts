// The one place handler results become HTTP, with case-insensitive input keys and readable
// validation errors.
import Boom from '@hapi/boom';
import type { IncomingMessage } from 'node:http';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type Joi from 'joi';
import type { DeliveryTracker } from './delivery';
import type { GoneWatch } from './dispatcher';
import type { WakeMeter } from './latency';
import type { HandlerResult } from './results';

/** The spec's status code for each message type: it names the category at HTTP level. */
export const MessageStatusCode = { REQUEST: 210, VERIFY: 212, SCAN: 211 } as const;
const ReasonPhrase = { REQUEST: 'Request', VERIFY: 'Verify', SCAN: 'Scan' } as const;

/** True for server.inject() requests (hapi has the getter; its typings declare it only under `auth`). */
const isInjected = (request: Request): boolean => (request as unknown as { isInjected: boolean }).isInjected === true;

/** The client's address as recorded in the delivery history. */
export const clientAddress = (request: Request): string | null => request.info.remoteAddress || null;

/** What reply() needs besides the request and the result. */
export interface ReplyContext {
  wake?: WakeMeter;
  deliveries: DeliveryTracker;
}

/**
 * The one place handler results become HTTP. A message response is handed to the delivery
 * tracker (lib/delivery.ts), which removes the message from its queue once the client has
 * read it, or puts it back at the head.
 */
export function reply(request: Request, h: ResponseToolkit, result: HandlerResult, context: ReplyContext): ResponseObject | symbol {
  switch (result.kind) {
    case 'ok':
      return h.response(result.body).code(200);
    case 'empty':
      return h.response().code(204);
    case 'unavailable': {
      const err = Boom.serverUnavailable(result.reason);
      err.output.headers['Retry-After'] = String(result.retryAfterSeconds);
      throw err;
    }
    case 'message': {
      // A client known to be gone gets nothing written; a FIN that Node has not read yet is
      // judged by the tracker after the write (lib/delivery.ts). This response bypasses hapi's
      // asynchronous response pipeline so that the look, the tracking and the write are one
      // synchronous step.
      const { res, req } = request.raw;
      if (res.destroyed || req.socket.destroyed || req.socket.readableEnded) {
        result.claim.release();
        return h.abandon;
      }
      const { message, queue, id } = result.claim.stored;
      const code = MessageStatusCode[message.Type];
      context.wake?.written(queue, id);
      const body = JSON.stringify(message);
      // Read now: once the client has closed the socket, its address is gone.
      context.deliveries.track(result.claim, req, res, isInjected(request), clientAddress(request));
      res.writeHead(code, ReasonPhrase[message.Type], {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-cache',
        // For clients that deduplicate: the message's queue row, and which delivery of it this is
        // (2 or more: an earlier response may have been read, so this may be a duplicate).
        'x-message-id': String(id),
        'x-delivery-attempt': String(result.claim.attempt),
      });
      res.end(body);
      return h.abandon;
    }
  }
}

/**
 * When the client's connection closes before its response is written (a long poll it gave up).
 * A listener on the response's 'close', not an AbortSignal: this runs for every poll, and an
 * AbortController with its event target cost about 2% of the CPU at 1,000 cycles/s.
 */
export function goneWatch(request: Request): GoneWatch {
  const res = request.raw.res;
  return (onGone) => {
    if (res.destroyed) {
      onGone();
      return () => {};
    }
    res.once('close', onGone);
    return () => res.removeListener('close', onGone);
  };
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

/** How much of an oversized chunked body is read away (and for how long) so that its 413 arrives. */
const OVERSIZED_DRAIN_BYTES = 1024 * 1024;
const OVERSIZED_DRAIN_MS = 5000;

/**
 * A chunked body over MaxPayloadBytes: hapi's reader destroys the request at the limit, which
 * resets the connection before the 413 is written (a body with a Content-Length is refused
 * before it is read). For chunked requests, that destroy reads the rest of the body away
 * instead, up to a bound, so that the 413 reaches the client; past the bound it destroys.
 */
export function answerOversizedChunkedBodies(req: IncomingMessage): void {
  if (!req.headers['transfer-encoding'] || req.headers['content-length'] !== undefined) return;
  const destroy = req.destroy.bind(req);
  req.destroy = (err?: Error) => {
    let extra = 0;
    const timer = setTimeout(() => destroy(err), OVERSIZED_DRAIN_MS);
    timer.unref();
    req.on('data', (chunk: Buffer) => {
      extra += chunk.length;
      if (extra > OVERSIZED_DRAIN_BYTES) destroy(err);
    });
    req.once('end', () => clearTimeout(timer));
    req.once('close', () => clearTimeout(timer));
    req.resume();
    return req;
  };
}
