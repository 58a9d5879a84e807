// The one place handler results become HTTP, with case-insensitive input keys and readable
// validation errors.
import Boom from '@hapi/boom';
import { duplicateKeys } from '../process/json-keys';
import type { IncomingMessage } from 'node:http';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type Joi from 'joi';
import type { DeliveryTracker } from '../queue/delivery';
import type { GoneWatch } from '../queue/dispatcher';
import type { WakeMeter } from '../ops/latency';
import type { SorterMessage } from '../../model/messages';
import type { HandlerResult } from '../functions/results';

/** The spec's status code for each message type: it names the category at HTTP level. */
export const MessageStatusCode = { REQUEST: 210, VERIFY: 212, SCAN: 211 } as const;
const ReasonPhrase = { REQUEST: 'Request', VERIFY: 'Verify', SCAN: 'Scan' } as const;

/** True for server.inject() requests (hapi has the getter; its typings declare it only under `auth`). */
const isInjected = (request: Request): boolean => (request as unknown as { isInjected: boolean }).isInjected === true;

/** The client's address as recorded in logs, the delivery history and the outbox (behind a trusted proxy: from X-Forwarded-For, resolved by the server at onRequest). */
export const clientAddress = (request: Request): string | null => {
  const resolved = (request.app as { clientAddress?: string | null }).clientAddress;
  return resolved !== undefined ? resolved : request.info.remoteAddress || null;
};

/** What reply() needs besides the request and the result. */
export interface ReplyContext {
  wake?: WakeMeter;
  deliveries: DeliveryTracker;
}

/**
 * The one place handler results become HTTP. A message response is handed to the delivery
 * tracker (lib/queue/delivery.ts), which removes the message from its queue once the client has
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
      // judged by the tracker after the write (lib/queue/delivery.ts). This response bypasses hapi's
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
      context.deliveries.track(result.claim, req, res, { injected: isInjected(request), address: clientAddress(request), explicit: result.explicitAck });
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
export const handedOut = (request: Request): HandedOut | undefined => (request.app as { handedOut?: HandedOut }).handedOut;

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

/** 400 when a field of the body stands twice under the same spelling (JSON.parse would keep the last). */
export function refuseRepeatedKeys(json: string, keys: string[]): void {
  const known = new Map(keys.map((k) => [k.toLowerCase(), k]));
  const twice = duplicateKeys(json).find((d) => d.path === '' && known.has(d.key.toLowerCase()));
  if (twice) throw Boom.badRequest(`"${known.get(twice.key.toLowerCase())}" is given twice in the body (as "${twice.key}" and "${twice.key}")`);
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
    // hapi's reader has given up (413): let go of it and of what it collected, or every drained
    // request would hold its body until the drain ends.
    req.unpipe();
    req.removeAllListeners('data');
    let extra = 0;
    const timer = setTimeout(() => destroy(err), OVERSIZED_DRAIN_MS);
    timer.unref();
    const done = () => clearTimeout(timer);
    req.on('data', (chunk: Buffer) => {
      extra += chunk.length;
      if (extra > OVERSIZED_DRAIN_BYTES) destroy(err);
    });
    req.once('end', done);
    req.once('close', done);
    req.socket?.once('close', done);
    req.resume();
    return req;
  };
}

/** What Node's HTTP parser refused, in words a client developer can act on. */
function parserErrorMessage(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'the request headers are larger than 16 KB';
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'the request has both Content-Length and Transfer-Encoding, or a Transfer-Encoding the server does not accept';
    case 'HPE_INVALID_CONTENT_LENGTH':
      return 'the Content-Length header is not valid (conflicting or not a number)';
    case 'HPE_INVALID_METHOD':
    case 'HPE_INVALID_URL':
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_CONSTANT':
      return 'the request line is not valid HTTP/1.1';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'the request was not received completely in time';
    default:
      return `the request is not valid HTTP (${err.code ?? err.message})`;
  }
}

/**
 * Requests Node's HTTP parser refuses (oversized headers, a bad request line, conflicting
 * lengths, an Expect it cannot meet) are answered with the same JSON errors as everything else:
 * 431 for oversized headers, 417 for an unknown Expect, instead of an empty 400 or 417.
 * Replaces hapi's handler, which writes an empty 400.
 */
export function answerParserErrors(listener: import('node:http').Server): void {
  listener.removeAllListeners('clientError');
  listener.on('clientError', (err: NodeJS.ErrnoException, socket: import('node:net').Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const error = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    const body = JSON.stringify({ statusCode: status, error, message: parserErrorMessage(err) });
    const write = () => {
      if (socket.writable) socket.end(`HTTP/1.1 ${status} ${error}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      else socket.destroy();
    };
    // A response still being written on this connection (a pipelined request went wrong) finishes first.
    const current = (socket as unknown as { _httpMessage?: import('node:http').ServerResponse })._httpMessage;
    if (current && !current.writableFinished) current.once('finish', write);
    else write();
  });
  // An Expect other than 100-continue: Node answers 417 with an empty body unless asked.
  listener.on('checkExpectation', (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const body = JSON.stringify({ statusCode: 417, error: 'Expectation Failed', message: `the Expect header "${String(req.headers.expect).slice(0, 100)}" is not supported: send "100-continue" or none` });
    res.writeHead(417, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  });
}
