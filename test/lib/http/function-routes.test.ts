// The HTTP trigger (lib/http/function-routes.ts) on a bare hapi server, with a manifest of its
// own: each HTTP event becomes a route running its function with the request's view and the
// function's fixed input, keys bound as the schema spells them, and any other method 405.
import Hapi from '@hapi/hapi';
import type { Deps } from '../../../lib/deps';
import type { Manifest } from '../../../lib/functions/manifest';
import { routeFunctions } from '../../../lib/http/function-routes';
import { guardRequests } from '../../../lib/http/guards';
import { validationFailAction } from '../../../lib/http/input-keys';

const manifest: Manifest = {
  service: 'test',
  functions: {
    echo: {
      handler: 'test/fixtures/functions/echo-http',
      description: 'Echo the event',
      input: { queue: 'sortation' },
      events: [{ http: { method: 'GET', path: '/echo/{Id}' } }],
    },
    echoPost: {
      handler: 'test/fixtures/functions/echo-http',
      description: 'Echo a POST',
      events: [{ http: { method: 'POST', path: '/echo/{Id}' } }, { http: { method: 'POST', path: '/echo-too/{Id}' } }],
    },
  },
};

let server: Hapi.Server;
beforeAll(() => {
  server = Hapi.server({ routes: { validate: { failAction: validationFailAction } } });
  guardRequests(server, { TrustedProxies: [], ApiKeys: [] });
  // The echo function uses none of the service's parts.
  routeFunctions(server, manifest, {} as Deps);
});

describe('routeFunctions', () => {
  it("runs each HTTP event's function with the request's view and the function's input", async () => {
    const res = await server.inject('/echo/A7?COUNT=3');
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toEqual({
      method: 'get',
      params: { Id: 'A7' },
      query: { count: 3 },
      clientAddress: '127.0.0.1',
      input: { queue: 'sortation' },
      gone: 'function',
    });
    const posted = await server.inject({ method: 'POST', url: '/echo/B8', payload: {} });
    expect(JSON.parse(posted.payload)).toMatchObject({ method: 'post', params: { Id: 'B8' }, input: {} });
  });

  it("names each route after its function, with the manifest's description, validating with the function's schemas", async () => {
    expect(server.lookup('echo')).toMatchObject({ path: '/echo/{Id}', method: 'get', settings: { description: 'Echo the event' } });
    expect(server.lookup('echoPost')).toMatchObject({ method: 'post', path: '/echo/{Id}' });
    // A function with two HTTP events: two routes, ids unique.
    expect(server.lookup('echoPost-2')).toMatchObject({ method: 'post', path: '/echo-too/{Id}' });
    const bad = await server.inject('/echo/A7?count=many');
    expect([bad.statusCode, JSON.parse(bad.payload).message]).toEqual([400, '"count" must be a number']);
  });

  it('answers any other method on its paths with 405 and Allow', async () => {
    const res = await server.inject({ method: 'PUT', url: '/echo/A7' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(JSON.parse(res.payload).message).toBe('PUT is not allowed on /echo/A7; allowed: GET, HEAD, POST'); // the path asked for, not the template
  });
});
