// The HTTP trigger: one route per HTTP event of manifest.json, running its function with the
// service's deps, and 405 with Allow for any other method on those paths; and the one place
// handler results become HTTP: status codes, the message responses handed to the delivery
// tracker, 503s with Retry-After.
import Boom from '@hapi/boom';
import type Hapi from '@hapi/hapi';
import type { ReqRef, ReqRefDefaults, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { SorterMessage } from '../../model/messages';
import type { Deps } from '../deps';
import { type HandlerResult, loadHttpFunction } from '../functions/define';
import { type Manifest, httpTriggers } from '../functions/manifest';
import type { WakeMeter } from '../ops/latency';
import type { GoneWatch } from '../queue/dispatcher';
import { callerOf } from './auth';
import type { KeyLists } from './guards';
import { schemaKeys } from './input-keys';
import type { DeliveryTracker } from './read-proof/delivery';
import { routeOptions } from './routes';

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

/** Route each HTTP trigger of `manifest` to its function. */
export function routeFunctions(server: Hapi.Server, manifest: Manifest, deps: Deps): void {
  const ids = new Map<string, number>();
  for (const { name, fn, method, path, access } of httpTriggers(manifest)) {
    // A function may have several HTTP events; hapi's route ids must be unique: name, name-2, ...
    const n = (ids.get(name) ?? 0) + 1;
    ids.set(name, n);
    const id = n === 1 ? name : `${name}-${n}`;
    const f = loadHttpFunction(fn.handler);
    const app: KeyLists = { query: schemaKeys(f.binding.query), payload: schemaKeys(f.binding.payload), access };
    const input = fn.input ?? {};
    server.route({
      method,
      path,
      options: {
        ...routeOptions(f.binding, input, fn.description, path, { app, id }),
        handler: async (request, h) => {
          const view = {
            method: request.method,
            params: request.params,
            query: request.query,
            headers: request.headers,
            payload: request.payload,
            clientAddress: clientAddress(request),
            gone: goneWatch(request),
            caller: callerOf(request)?.name ?? null,
          };
          return reply(request, h, await f.invoke(deps, view, input), deps);
        },
      },
    });
  }
  refuseOtherMethods(server, manifest);
}

/** Any other method on a path we serve: 405 with Allow (what HTTP clients expect), not 404. */
function refuseOtherMethods(server: Hapi.Server, manifest: Manifest): void {
  const methodsByPath = new Map<string, string[]>();
  for (const { method, path } of httpTriggers(manifest))
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), ...(method === 'GET' ? ['GET', 'HEAD'] : [method])]);
  for (const [path, methods] of methodsByPath) {
    server.route({
      method: '*',
      path,
      options: {
        handler: (request, h) => {
          const err = Boom.methodNotAllowed(
            `${request.method.toUpperCase()} is not allowed on ${request.path}; allowed: ${methods.join(', ')}`,
            undefined,
            methods,
          );
          return h.response(err.output.payload).code(405).header('Allow', methods.join(', '));
        },
      },
    });
  }
}
