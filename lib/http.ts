import Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type Joi from 'joi';
import type { Claim } from './dispatcher';
import type { WakeMeter } from './latency';
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
export async function reply(request: Request, h: ResponseToolkit, result: HandlerResult, clock: () => Date, wake?: WakeMeter): Promise<ResponseObject | symbol> {
  switch (result.kind) {
    case 'ok':
      return h.response(result.body).code(200);
    case 'empty':
      return h.response().code(204);
    case 'message': {
      // A client that gave up just as its message arrived has its FIN queued already; node
      // reads it in the next poll phase. Look once more after that phase, then write in the
      // same synchronous step, so no client can leave unseen between the look and the write.
      // That is why this one response bypasses hapi's (asynchronous) response pipeline.
      await new Promise((resolve) => setImmediate(resolve));
      const { res, req } = request.raw;
      if (res.destroyed || req.socket.destroyed || req.socket.readableEnded) {
        result.claim.release();
        return h.abandon;
      }
      const { message, queue, id } = result.claim.stored;
      const code = MessageStatusCode[message.Type];
      wake?.written(queue, id);
      const body = JSON.stringify(message);
      bindClaimToResponse(request, result.claim, clock);
      res.writeHead(code, ReasonPhrase[message.Type], {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-cache',
      });
      res.end(body);
      return h.abandon;
    }
  }
}

/**
 * How long after a response is written we listen for the connection being reset. A client
 * that closes its socket with our response unread makes its kernel answer with a reset
 * (ECONNRESET here): that message was never read, so it goes back to the queue. A client
 * that read the response and closed cleanly (FIN) keeps it.
 */
export const DELIVERY_GRACE_MS = 5;

function bindClaimToResponse(request: Request, claim: Claim, clock: () => Date): void {
  const res = request.raw.res;
  const socket = request.raw.req.socket;
  // Read now: once the client has closed the socket, its address is gone.
  const address = clientAddress(request);
  let reset = false;
  const onError = () => (reset = true);
  const onClose = (hadError: boolean) => (reset ||= hadError);
  socket.on('error', onError);
  socket.once('close', onClose);
  const unlisten = () => {
    socket.removeListener('error', onError);
    socket.removeListener('close', onClose);
  };
  res.once('finish', () => {
    setTimeout(() => {
      unlisten();
      if (reset) claim.release();
      else claim.commit({ deliveredAt: clock().toISOString(), clientAddress: address });
    }, DELIVERY_GRACE_MS);
  });
  // 'close' also follows a normal 'finish': only a response that never finished gives the message back.
  res.once('close', () => {
    if (!res.writableFinished) {
      unlisten();
      claim.release();
    }
  });
}

const CONNECTION_CLOSED = new Error('the client connection closed');

/** An AbortSignal that fires if the client's connection closes before its response is written. */
export function disconnectSignal(request: Request): AbortSignal {
  const controller = new AbortController();
  const res = request.raw.res;
  // Every response closes at its end, so this fires once per poll: pass a shared reason, or
  // abort() builds a DOMException with a stack trace each time (about 2% of the CPU at 1000/s).
  if (res.destroyed) controller.abort(CONNECTION_CLOSED);
  else res.once('close', () => controller.abort(CONNECTION_CLOSED));
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
