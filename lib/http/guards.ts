// What every request passes before its route runs: who the client is (behind a trusted proxy),
// well-formed HTTP/1.1, the API key, and input keys bound case-insensitively, each refused with a
// JSON error that says why; and a connection we can still answer on, else nothing runs.
import type { Socket } from 'node:net';
import { replaceInput } from '../internals/hapi';
import { destroySoon } from '../internals/node';
import Boom from '@hapi/boom';
import type Hapi from '@hapi/hapi';
import type { ApiRole, Config } from '../process/config';
import { apiKeyCheck, checkRole } from './auth';
import { clientAddressResolver } from './forwarded';
import { canonicalKeys, parseJsonBody, refuseRepeatedKeys } from './input-keys';
import { answerOversizedChunkedBodies } from './wire-errors';

/** The key names of a route's query and body schemas (route settings' `app`), for case-insensitive binding. */
export interface KeyLists {
  query: string[];
  payload: string[];
  /** The role a key needs for the route (manifest.json, `access`); none: any known key. */
  access?: ApiRole;
}

/** A route's key lists, if it has them (the function routes do; hapi-swagger's and the dashboard's have `{}`). */
function keyListsOf(app: unknown): KeyLists | undefined {
  return typeof app === 'object' &&
    app !== null &&
    'query' in app &&
    Array.isArray(app.query) &&
    'payload' in app &&
    Array.isArray(app.payload)
    ? {
        query: app.query,
        payload: app.payload,
        ...('access' in app && (app.access === 'wcs' || app.access === 'operator' || app.access === 'monitor') && { access: app.access }),
      }
    : undefined;
}

/**
 * The payload settings the guards need of every route (lib/http/server.ts): hapi reads a body, and
 * unzips it, but leaves it as bytes; the guards parse it as JSON with its text at hand.
 */
export const rawBodies = { parse: 'gunzip', output: 'data' } as const;

/**
 * A request that arrived after we ended its connection: we closed an idle keep-alive connection,
 * or asked a client for proof of read (lib/http/read-proof/delivery.ts, its connection watch), at the moment it sent the
 * request; or it was pipelined behind a response that closed the connection. Node's http server
 * still parses and dispatches it, but its answer cannot reach the client, so it must have no
 * effect either: a POST run now would reach the sorter with the client told nothing (it would
 * send it again), a poll would hand out a message nobody can read. Nothing runs and nothing is
 * written (a response written to such a connection can trip Node's pipelining bookkeeping); the
 * client sees the connection closed before any answer, which every HTTP client reports as an
 * error (safe to send again). Recorded as 499.
 */
function unanswerable(request: Hapi.Request): boolean {
  // A real socket; server.inject's stand-in has neither property.
  // (Not `req.destroyed`: Node destroys a request's stream once its body is read.)
  const socket = request.raw.req.socket as Partial<Socket>;
  if (socket.writableEnded !== true && socket.destroyed !== true) return false;
  // What the access log and the metrics record: nothing is sent.
  request.raw.res.statusCode = 499;
  // Our FIN is out: closed once what was written before it is flushed (the response this request
  // will never have would otherwise hold the connection open).
  if (socket.writableEnded === true) destroySoon(socket as Socket);
  return true;
}

/** Install the request guards on `server` (whose routes read bodies with `rawBodies`). */
export function guardRequests(server: Hapi.Server, config: Pick<Config, 'TrustedProxies' | 'ApiKeys'>): void {
  // One extension for all of them, in this order: hapi runs each extension as a step of its own
  // (a toolkit and an await), which three times a request cost more than the checks themselves.
  // Once per request, before anything records it: behind a trusted proxy, X-Forwarded-For names the client.
  const resolveClient = clientAddressResolver(config.TrustedProxies);
  const checkKey = config.ApiKeys.length > 0 ? apiKeyCheck(config.ApiKeys) : null;
  server.ext('onRequest', (request, h) => {
    const { httpVersion, headers } = request.raw.req;
    request.app.clientAddress = resolveClient(request.info.remoteAddress, headers['x-forwarded-for']);
    if (httpVersion !== '1.0' && !headers.host) throw Boom.badRequest('the request is not valid HTTP/1.1: it has no Host header');
    answerOversizedChunkedBodies(request.raw.req);
    if (checkKey) (request.app as { caller?: unknown }).caller = checkKey(request);
    return h.continue;
  });
  // Bind input keys case-insensitively before validation runs (hapi validates after onPostAuth).
  server.ext('onPostAuth', (request, h) => {
    // Our last step before validation and the handler (the body is read by now): see `unanswerable`.
    if (unanswerable(request)) return h.abandon;
    const keys = keyListsOf(request.route.settings.app);
    // The route is known now: a key of the wrong role is refused before anything runs.
    if (checkKey) checkRole((request.app as { caller?: Parameters<typeof checkRole>[0] }).caller, keys?.access, request.path);
    if (keys?.query.length) replaceInput(request, 'query', canonicalKeys(request.query, keys.query, 'query'));
    // The body as hapi read it (`rawBodies`), unzipped, at most MaxPayloadBytes: parsed here as hapi
    // would, and its text checked for a field given twice under the same spelling (JSON.parse keeps
    // the last of two equal keys, which must be refused like two spellings of one field are).
    if (Buffer.isBuffer(request.payload)) {
      const text = request.payload.toString('utf8');
      replaceInput(request, 'payload', parseJsonBody(text));
      if (keys?.payload.length) refuseRepeatedKeys(text, keys.payload);
    }
    if (keys?.payload.length) replaceInput(request, 'payload', canonicalKeys(request.payload, keys.payload, 'body'));
    return h.continue;
  });
}
