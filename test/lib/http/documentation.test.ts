// The API's own description (lib/http/documentation.ts) on a bare hapi server with one documented
// route: Swagger UI at /, the finished OpenAPI 3.0 document at /swagger.json and the same at
// /openapi.json, with the API key scheme only when keys are set. The whole document of the
// service: test/lib/http/openapi.test.ts and test/http/contract.test.ts.
import Hapi from '@hapi/hapi';
import '../../../lib/http/swagger-footprint';
import { registerDocumentation } from '../../../lib/http/documentation';

async function documented(security: boolean) {
  const server = Hapi.server();
  await registerDocumentation(server, '9.8.7', security);
  server.route({ method: 'GET', path: '/status', options: { tags: ['api', 'status'], description: 'Status', handler: () => ({}) } });
  server.route({ method: 'GET', path: '/metrics', options: { tags: ['metrics'], handler: () => '' } });
  await server.initialize();
  return server;
}

describe('registerDocumentation', () => {
  it('serves an OpenAPI 3.0 document of the routes tagged api, the same at /swagger.json and /openapi.json', async () => {
    const server = await documented(false);
    const res = await server.inject('/swagger.json');
    expect(res.statusCode).toBe(200);
    const doc = JSON.parse(res.payload);
    expect(doc.openapi).toMatch(/^3\.0/);
    expect(doc.info).toMatchObject({ title: 'Sorter integration service', version: '9.8.7' });
    expect(doc.info.description).toMatch(/^Queue-based HTTP JSON interface/);
    expect(Object.keys(doc.paths)).toEqual(['/status']);
    expect(doc.security ?? []).toEqual([]);
    expect(doc.components?.securitySchemes).toBeUndefined();
    expect(JSON.parse((await server.inject('/openapi.json')).payload)).toEqual(doc);
  });

  it('with keys, documents the X-API-Key scheme for every operation', async () => {
    const doc = JSON.parse((await (await documented(true)).inject('/openapi.json')).payload);
    expect(doc.components.securitySchemes).toEqual({ apiKey: { type: 'apiKey', name: 'X-API-Key', in: 'header' } });
    expect(doc.security).toEqual([{ apiKey: [] }]);
  });

  it('serves Swagger UI at /', async () => {
    const res = await (await documented(false)).inject('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.payload).toMatch(/swagger-ui/i);
  });
});
