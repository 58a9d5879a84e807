// The hapi server, composed from the manifest and returned initialized but not listening: only
// the process entry (lib/main.ts) starts it, so tests get a ready server without a port.
import './swagger-footprint'; // before hapi-swagger: see the module
import http from 'node:http';
import Hapi from '@hapi/hapi';
import { type Manifest, loadManifest } from '../functions/manifest';
import type { Service } from '../service';
import { recordResponses } from './access-log';
import { dashboardRoutes } from './dashboard-routes';
import { registerDocumentation } from './documentation';
import { routeFunctions } from './function-routes';
import { guardRequests, rawBodies } from './guards';
import { validationFailAction } from './input-keys';
import { answerParserErrors } from './wire-errors';

/** Where the server listens; defaults come from config (Port, Host). */
export interface ServerOptions {
  manifest?: Manifest;
  port?: number;
  host?: string;
}

/** Time to receive a request's headers, and the whole request (ms). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * Compose the hapi server from the manifest: one route per HTTP trigger, each running its
 * handler with the service's deps. Returned initialized but not listening (tests use server.inject).
 */
export async function createServer(service: Service, options: ServerOptions = {}): Promise<Hapi.Server> {
  const { deps } = service;
  const config = deps.settings;
  const server = Hapi.server({
    // Node would answer a request without Host (required in HTTP/1.1) with an empty 400 itself;
    // the guards check it instead, so that the answer is JSON like every other error.
    listener: http.createServer({ requireHostHeader: false }),
    port: options.port ?? config.Port,
    host: options.host ?? config.Host,
    router: { stripTrailingSlash: true },
    debug: false, // errors go to the structured log (access-log.ts), not to stderr
    routes: {
      // No route uses cookies: do not parse them on every request.
      state: { parse: false, failAction: 'ignore' },
      // JSON bodies only, parsed by the guards with the raw text at hand for the repeated-key check.
      payload: { maxBytes: config.MaxPayloadBytes, allow: ['application/json'], ...rawBodies },
      validate: { failAction: validationFailAction },
    },
  });
  const security = config.ApiKeys.length > 0;
  await registerDocumentation(server, deps.version, security);

  answerParserErrors(server.listener);
  // A client must send its whole request within these (a long poll's request is sent at once; its
  // wait is the response's): slow-header and slow-body connections do not linger for Node's 300 s.
  server.listener.headersTimeout = HEADERS_TIMEOUT_MS;
  server.listener.requestTimeout = REQUEST_TIMEOUT_MS;
  deps.deliveries.attach(server.listener);
  // Before the listener stops: clients holding a message whose read is not proven are asked.
  server.ext('onPreStop', () => deps.deliveries.drain());

  // Every request is work: the event loop's delay is sampled from it (lib/ops/event-loop.ts).
  server.ext('onRequest', (_request, h) => {
    deps.eventLoop.busy();
    return h.continue;
  });
  recordResponses(server, deps);
  guardRequests(server, config);
  routeFunctions(server, options.manifest ?? loadManifest(), deps);
  dashboardRoutes(server, security);
  // Ready but not listening: plugin dependencies (the Swagger UI routes) are wired at initialize.
  await server.initialize();
  return server;
}
