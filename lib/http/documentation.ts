// The API's own description: Swagger UI at /, the OpenAPI document at /swagger.json and
// /openapi.json, finished where the generator cannot say it all.
import type Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import Vision from '@hapi/vision';
import HapiSwagger from 'hapi-swagger';
import { type OpenApiDocument, finishDocument } from './openapi';

const API_DESCRIPTION = [
  'Queue-based HTTP JSON interface between a warehouse control system (WCS) and a parcel sorter.',
  'GET /sortation returns REQUEST (210) or VERIFY (212); GET /destination returns SCAN (211); both return 204 with an empty body when nothing arrives within timeOut.',
  'POST /sortation answers a REQUEST with a destination; POST /destination sends destination settings. Both are forwarded to the sorter.',
  'Errors are JSON {statusCode, error, message}. Input field names match case-insensitively; output names are exactly as documented.',
].join(' ');

/** Register Swagger UI and the OpenAPI document (with the API key scheme when `security`). */
export async function registerDocumentation(server: Hapi.Server, version: string, security: boolean): Promise<void> {
  await server.register([
    Inert,
    Vision,
    {
      plugin: HapiSwagger,
      options: {
        info: { title: 'Sorter integration service', version, description: API_DESCRIPTION },
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
    if (
      request.path === '/swagger.json' &&
      !('isBoom' in response && response.isBoom) &&
      'source' in response &&
      typeof response.source === 'object'
    ) {
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
}
