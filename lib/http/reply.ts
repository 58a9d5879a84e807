// The one place handler results become HTTP: status codes, the message responses handed to the
// delivery tracker, 503s with Retry-After.
import Boom from '@hapi/boom';
import type { ReqRef, ReqRefDefaults, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { DeliveryTracker } from './read-proof/delivery';
import type { GoneWatch } from '../queue/dispatcher';
import type { WakeMeter } from '../ops/latency';
import type { SorterMessage } from '../../model/messages';
import type { HandlerResult } from '../functions/results';

/** The spec's status code for each message type: it names the category at HTTP level. */
export const MessageStatusCode = { REQUEST: 210, VERIFY: 212, SCAN: 211 } as const;
const ReasonPhrase = { REQUEST: 'Request', VERIFY: 'Verify', SCAN: 'Scan' } as const;

declare module '@hapi/hapi' {
  // What the server keeps on a request for later steps of the same request.
  interface RequestApplicationState {
    /** The client's address, resolved at onRequest (lib/http/guards.ts); undefined before. */
    clientAddress?: string | null;
    /** The message a GET handed out, for the access log and the metrics. */
    handedOut?: HandedOut;
  }
  // hapi has the getter; its typings declare it only under `auth`.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface Request<Refs extends ReqRef = ReqRefDefaults> {
    /** True for server.inject() requests. */
    readonly isInjected?: boolean;
  }
}

/** True for server.inject() requests. */
const isInjected = (request: Request): boolean => request.isInjected === true;

/** The client's address as recorded in logs, the delivery history and the outbox (behind a trusted proxy: from X-Forwarded-For, resolved by the server at onRequest). */
export const clientAddress = (request: Request): string | null => {
  const resolved = request.app.clientAddress;
  return resolved !== undefined ? resolved : request.info.remoteAddress || null;
};

/** What reply() needs besides the request and the result. */
export interface ReplyContext {
  wake?: WakeMeter;
  deliveries: DeliveryTracker;
}

/**
 * The one place handler results become HTTP. A message response is handed to the delivery
 * tracker (lib/http/read-proof/delivery.ts), which removes the message from its queue once the client has
 * read it, or puts it back at the head.
 */
export function reply(request: Request, h: ResponseToolkit, result: HandlerResult, context: ReplyContext): ResponseObject | symbol {
  switch (result.kind) {
    case 'ok':
      return h.response(result.body).code(result.status ?? 200);
    case 'empty':
      return h.response().code(204);
    case 'text':
      return h.response(result.body).code(200).type(result.contentType);
    case 'unavailable': {
      const err = Boom.serverUnavailable(result.reason);
      err.output.headers['Retry-After'] = String(result.retryAfterSeconds);
      throw err;
    }
    case 'message': {
      // A client known to be gone (or a connection we have closed) gets nothing written; a FIN that Node has not read yet is
      // judged by the tracker after the write (lib/http/read-proof/delivery.ts). This response bypasses hapi's
      // asynchronous response pipeline so that the look, the tracking and the write are one
      // synchronous step.
      const { res, req } = request.raw;
      if (res.destroyed || req.socket.destroyed || req.socket.readableEnded || req.socket.writableEnded) {
        result.claim.release();
        return h.abandon;
      }
      const { message, queue, id } = result.claim.stored;
      const code = MessageStatusCode[message.Type];
      context.wake?.written(queue, id);
      const body = JSON.stringify(message);
      Object.assign(request.app, { handedOut: { messageId: id, attempt: result.claim.attempt, type: message.Type } });
      // Read now: once the client has closed the socket, its address is gone.
      context.deliveries.track(result.claim, req, res, {
        injected: isInjected(request),
        address: clientAddress(request),
        explicit: result.explicitAck,
      });
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

/** What a message response handed out, for the access log and the metrics (set by `reply`). */
export interface HandedOut {
  messageId: number;
  attempt: number;
  type: SorterMessage['Type'];
}

/** The message this request was answered with, if any. */
export const handedOut = (request: Request): HandedOut | undefined => request.app.handedOut;

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
