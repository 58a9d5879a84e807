// What every request passes before its route runs: who the client is (behind a trusted proxy),
// well-formed HTTP/1.1, the API key, and input keys bound case-insensitively, each refused
// with a JSON error that says why.
import Boom from '@hapi/boom';
import type Hapi from '@hapi/hapi';
import type { Config } from '../process/config';
import { apiKeyCheck } from './auth';
import { clientAddressResolver } from './forwarded';
import { canonicalKeys, refuseRepeatedKeys } from './input-keys';
import { answerOversizedChunkedBodies } from './wire-errors';

/** The key names of a route's query and body schemas (route settings' `app`), for case-insensitive binding. */
export interface KeyLists {
  query: string[];
  payload: string[];
}

/** Install the request guards on `server`. */
export function guardRequests(server: Hapi.Server, config: Pick<Config, 'TrustedProxies' | 'ApiKeys'>): void {
  // Once per request, before anything records it: behind a trusted proxy, X-Forwarded-For names the client.
  const resolveClient = clientAddressResolver(config.TrustedProxies);
  server.ext('onRequest', (request, h) => {
    (request.app as { clientAddress?: string | null }).clientAddress = resolveClient(request.info.remoteAddress, request.raw.req.headers['x-forwarded-for']);
    return h.continue;
  });
  server.ext('onRequest', (request, h) => {
    const { httpVersion, headers } = request.raw.req;
    if (httpVersion !== '1.0' && !headers.host) throw Boom.badRequest('the request is not valid HTTP/1.1: it has no Host header');
    answerOversizedChunkedBodies(request.raw.req);
    return h.continue;
  });
  if (config.ApiKeys.length > 0) server.ext('onRequest', apiKeyCheck(config.ApiKeys));
  // The raw body as it is read (at most MaxPayloadBytes): JSON.parse keeps the last of two equal
  // keys, which must be refused like two spellings of one field are.
  server.ext('onRequest', (request, h) => {
    if (request.method !== 'get' && request.method !== 'head' && !request.headers['content-encoding']) {
      const chunks: Buffer[] = [];
      (request.app as { body?: Buffer[] }).body = chunks;
      request.events.on('peek', (chunk: Buffer | string) => chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));
    }
    return h.continue;
  });
  // Bind input keys case-insensitively before validation runs (hapi validates after onPostAuth).
  server.ext('onPostAuth', (request, h) => {
    const keys = request.route.settings.app as KeyLists | undefined;
    // hapi's types mark these read-only; hapi's own validation assigns them the same way.
    const writable = request as unknown as { query: unknown; payload: unknown };
    if (keys?.query?.length) writable.query = canonicalKeys(request.query, keys.query, 'query');
    if (keys?.payload?.length) {
      writable.payload = canonicalKeys(request.payload, keys.payload, 'body');
      const body = (request.app as { body?: Buffer[] }).body;
      if (body?.length) refuseRepeatedKeys(Buffer.concat(body).toString('utf8'), keys.payload);
    }
    return h.continue;
  });
}
