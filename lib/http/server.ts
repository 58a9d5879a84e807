// The hapi server: Swagger UI, authentication, case-insensitive keys, and one route per HTTP
// trigger.
import './swagger-assets'; // before hapi-swagger: see the module
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Boom from '@hapi/boom';
import Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import Vision from '@hapi/vision';
import HapiSwagger from 'hapi-swagger';
import { apiKeyCheck } from './auth';
import { clientAddressResolver } from './forwarded';
import { loadHttpFunction } from '../functions/define';
import { answerOversizedChunkedBodies, answerParserErrors, canonicalKeys, clientAddress, goneWatch, handedOut, refuseRepeatedKeys, reply, schemaKeys, validationFailAction } from './reply';
import { type Manifest, httpTriggers, loadManifest } from '../functions/manifest';
import { type OpenApiDocument, finishDocument } from './openapi';
import { projectRoot } from '../process/paths';
import { routeOptions } from './routes';
import type { Service } from '../service';

/** Where the server listens; defaults come from config (Port, Host). */
export interface ServerOptions {
  manifest?: Manifest;
  port?: number;
  host?: string;
}

/** The dashboard's page, script and style sheet. */
const DASHBOARD_DIR = path.join(projectRoot, 'dashboard');

/** Time to receive a request's headers, and the whole request (ms). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 20_000;

interface KeyLists {
  query: string[];
  payload: string[];
}

const API_DESCRIPTION = [
  'Queue-based HTTP JSON interface between a warehouse control system (WCS) and a parcel sorter.',
  'GET /sortation returns REQUEST (210) or VERIFY (212); GET /destination returns SCAN (211); both return 204 with an empty body when nothing arrives within timeOut.',
  'POST /sortation answers a REQUEST with a destination; POST /destination sends destination settings. Both are forwarded to the sorter.',
  'Errors are JSON {statusCode, error, message}. Input field names match case-insensitively; output names are exactly as documented.',
].join(' ');

/**
 * Compose the hapi server from the manifest: one route per HTTP trigger, each running its
 * handler with the service's deps. Returned initialized but not listening (tests use server.inject).
 */
export async function createServer(service: Service, options: ServerOptions = {}): Promise<Hapi.Server> {
  const { deps } = service;
  const config = deps.settings;
  const manifest = options.manifest ?? loadManifest();
  const server = Hapi.server({
    // Node would answer a request without Host (required in HTTP/1.1) with an empty 400 itself;
    // the check is made below instead, so that the answer is JSON like every other error.
    listener: http.createServer({ requireHostHeader: false }),
    port: options.port ?? config.Port,
    host: options.host ?? config.Host,
    router: { stripTrailingSlash: true },
    debug: false, // errors go to the structured log below, not to stderr
    routes: {
      // No route uses cookies: do not parse them on every request.
      state: { parse: false, failAction: 'ignore' },
      // A "__proto__" key is dropped like any other unknown field (hapi's default calls it invalid JSON).
      payload: { maxBytes: config.MaxPayloadBytes, allow: ['application/json'], protoAction: 'remove' },
      validate: { failAction: validationFailAction },
    },
  });

  const security = config.ApiKeys.length > 0;
  await server.register([
    Inert,
    Vision,
    {
      plugin: HapiSwagger,
      options: {
        info: { title: 'Sorter integration service', version: deps.version, description: API_DESCRIPTION },
        documentationPath: '/',
        OAS: 'v3.0',
        jsonPath: '/swagger.json',
        swaggerUIPath: '/swaggerui/',
        grouping: 'tags',
        sortEndpoints: 'ordered',
        ...(security && {
          securityDefinitions: { apiKey: { type: 'apiKey', name: 'X-API-Key', in: 'header' } },
          security: [{ apiKey: [] }],
        }),
      },
    },
  ]);

  // The document clients generate code from: finished where the generator cannot say it all.
  server.ext('onPreResponse', (request, h) => {
    const response = request.response;
    if (request.path === '/swagger.json' && !('isBoom' in response && response.isBoom) && 'source' in response && typeof response.source === 'object') {
      return h.response(finishDocument(structuredClone(response.source) as OpenApiDocument, { security })).code(response.statusCode);
    }
    return h.continue;
  });
  // The same finished document at /openapi.json too, where OpenAPI tools look first (not an
  // operation of the API, so not in the document itself; open like /swagger.json: lib/http/auth.ts).
  server.ext('onRequest', (request, h) => {
    if (request.path === '/openapi.json') request.setUrl('/swagger.json');
    return h.continue;
  });

  answerParserErrors(server.listener);
  // A client must send its whole request within these (a long poll's request is sent at once; its
  // wait is the response's): slow-header and slow-body connections do not linger for Node's 300 s.
  server.listener.headersTimeout = HEADERS_TIMEOUT_MS;
  server.listener.requestTimeout = REQUEST_TIMEOUT_MS;
  deps.deliveries.attach(server.listener);
  // Before the listener stops: clients holding a message whose read is not proven are asked.
  server.ext('onPreStop', () => deps.deliveries.drain());

  // Metrics of every response: duration by route and status, empty receives, messages handed
  // out, and the decision latency of an accepted assignment.
  server.events.on('response', (request) => {
    const res = request.response as { statusCode?: number } | null;
    const status = res?.statusCode ?? request.raw.res.statusCode;
    const method = request.method.toUpperCase();
    const ms = (request.info.responded || Date.now()) - request.info.received;
    // hapi's not-found route is '/{p*}': one label for every unknown path (labels stay bounded).
    const route = request.route.path === '/{p*}' ? 'unmatched' : request.route.path;
    deps.metrics.httpDuration.observe({ route, method, status: String(status) }, ms / 1000);
    const queue = route === '/sortation' ? 'sortation' : route === '/destination' ? 'destination' : null;
    const message = handedOut(request);
    // Every request costs about 10% CPU at 1,000 items/s (docs/performance.md): errors by default.
    if (config.AccessLog === 'all' || (config.AccessLog === 'errors' && status >= 400)) {
      const poll = queue && request.method === 'get' ? { outcome: message ? 'message' : status === 204 ? 'empty' : 'error', ...(message && { messageId: message.messageId, attempt: message.attempt }) } : {};
      deps.log.info({ access: true, method, path: request.path, status, ms, client: clientAddress(request), ...poll }, `${method} ${request.path} ${status} ${ms} ms`);
    }
    if (!queue) return;
    if (message) deps.metrics.handedOut.inc({ queue, type: message.type });
    else if (request.method === 'get' && status === 204) deps.metrics.emptyReceives.inc({ queue });
    else if (request.method === 'post' && status === 200 && queue === 'sortation') {
      const trackId = (request.payload as { TrackID?: unknown } | null)?.TrackID;
      if (typeof trackId === 'string') deps.decisions.assigned(trackId);
    }
  });

  server.events.on({ name: 'request', channels: 'error' }, (request, event) =>
    deps.log.error({ err: event.error, method: request.method, path: request.path }, 'request failed'),
  );

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
  if (security) server.ext('onRequest', apiKeyCheck(config.ApiKeys));

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

  for (const { name, fn, method, path } of httpTriggers(manifest)) {
    const f = loadHttpFunction(fn.handler);
    const app: KeyLists = { query: schemaKeys(f.binding.query), payload: schemaKeys(f.binding.payload) };
    const input = fn.input ?? {};
    server.route({
      method,
      path,
      options: {
        ...routeOptions(f.binding, input, fn.description, path, { app, id: name }),
        handler: async (request, h) => {
          const view = { method: request.method, params: request.params as Record<string, string>, query: request.query, headers: request.headers, payload: request.payload, clientAddress: clientAddress(request), gone: goneWatch(request) };
          return reply(request, h, await f.invoke(deps, view, input), deps);
        },
      },
    });
  }
  // The dashboard page and its files: static, no data in them (the page reads /dashboard/data, which
  // needs the API key like every route). Only this service's own files, nothing from elsewhere.
  const dashboardPage = fs.readFileSync(path.join(DASHBOARD_DIR, 'index.html'), 'utf8').replace('<body>', `<body data-key-required="${security}">`);
  const page = { 'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'", 'X-Content-Type-Options': 'nosniff' };
  const withHeaders = (request: Hapi.Request, h: Hapi.ResponseToolkit) => {
    const response = request.response;
    if (!('isBoom' in response && response.isBoom)) for (const [name, value] of Object.entries(page)) (response as Hapi.ResponseObject).header(name, value);
    return h.continue;
  };
  server.route([
    // The page says whether it needs a key, so that it asks for one before its first read (a 401 would be a console error).
    { method: 'GET', path: '/dashboard', options: { handler: (_request, h) => h.response(dashboardPage).type('text/html; charset=utf-8'), ext: { onPreResponse: { method: withHeaders } } } },
    { method: 'GET', path: '/dashboard/assets/{file}', options: { handler: { directory: { path: DASHBOARD_DIR, listing: false, index: false } }, ext: { onPreResponse: { method: withHeaders } } } },
  ]);
  // Any other method on a path we serve: 405 with Allow (what HTTP clients expect), not 404.
  const methodsByPath = new Map<string, string[]>();
  for (const { method, path } of httpTriggers(manifest)) methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), ...(method === 'GET' ? ['GET', 'HEAD'] : [method])]);
  for (const [path, methods] of methodsByPath) {
    server.route({
      method: '*',
      path,
      options: {
        handler: (request, h) => {
          const err = Boom.methodNotAllowed(`${request.method.toUpperCase()} is not allowed on ${path}; allowed: ${methods.join(', ')}`, undefined, methods);
          return h.response(err.output.payload).code(405).header('Allow', methods.join(', '));
        },
      },
    });
  }
  // Ready but not listening: plugin dependencies (the Swagger UI routes) are wired at initialize.
  await server.initialize();
  return server;
}
