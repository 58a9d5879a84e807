// What every request passes before its route (lib/http/guards.ts), on real hapi servers: the
// client's address behind a trusted proxy, the Host check, the API key only when keys are set,
// input keys bound case-insensitively and a field given twice refused.
import http from 'node:http';
import Hapi from '@hapi/hapi';
import Joi from 'joi';
import { type KeyLists, guardRequests, rawBodies } from '../../../lib/http/guards';
import { validationFailAction } from '../../../lib/http/input-keys';
import { rawExchange } from '../../helpers/raw-http';

/** A server with the guards and two routes: one that says who the client is, one that takes a body. */
function guarded(config: { TrustedProxies?: string[]; ApiKeys?: string[] }) {
  // Node answers a request without Host itself unless told not to (as lib/http/server.ts does).
  const listener = http.createServer({ requireHostHeader: false });
  const server = Hapi.server({
    listener,
    host: '127.0.0.1',
    port: 0,
    routes: { validate: { failAction: validationFailAction }, payload: rawBodies },
  });
  guardRequests(server, { TrustedProxies: config.TrustedProxies ?? [], ApiKeys: config.ApiKeys ?? [] });
  server.route({
    method: 'GET',
    path: '/who',
    handler: (request) => ({ client: (request.app as { clientAddress?: string | null }).clientAddress }),
  });
  const app: KeyLists = { query: [], payload: ['TrackID', 'Destination'] };
  const payload = Joi.object({ TrackID: Joi.string().required(), Destination: Joi.string() });
  server.route({
    method: 'POST',
    path: '/assign',
    options: { app, validate: { payload }, handler: (request) => request.payload as object },
  });
  return server;
}

describe('guardRequests', () => {
  it('names the client from X-Forwarded-For only behind a trusted proxy', async () => {
    const direct = guarded({});
    expect(JSON.parse((await direct.inject({ url: '/who', headers: { 'x-forwarded-for': '10.9.8.7' } })).payload)).toEqual({
      client: '127.0.0.1',
    });
    const proxied = guarded({ TrustedProxies: ['127.0.0.1'] });
    expect(JSON.parse((await proxied.inject({ url: '/who', headers: { 'x-forwarded-for': '10.9.8.7' } })).payload)).toEqual({
      client: '10.9.8.7',
    });
  });

  it('checks the API key only when keys are configured', async () => {
    expect((await guarded({}).inject('/who')).statusCode).toBe(200);
    const keyed = guarded({ ApiKeys: ['k'] });
    expect((await keyed.inject('/who')).statusCode).toBe(401);
    expect((await keyed.inject({ url: '/who', headers: { 'x-api-key': 'k' } })).statusCode).toBe(200);
  });

  it('binds body keys case-insensitively, and refuses a field given twice, in two spellings or in one', async () => {
    const server = guarded({});
    const post = (payload: string) =>
      server.inject({ method: 'POST', url: '/assign', payload, headers: { 'content-type': 'application/json' } });
    const bound = await post('{"trackid":"7","DESTINATION":"D1"}');
    expect([bound.statusCode, JSON.parse(bound.payload)]).toEqual([200, { TrackID: '7', Destination: 'D1' }]);
    const two = await post('{"TrackID":"7","trackId":"8"}');
    expect([two.statusCode, JSON.parse(two.payload).message]).toEqual([
      400,
      '"TrackID" is given twice in the body (as "TrackID" and "trackId")',
    ]);
    const same = await post('{"TrackID":"7","TrackID":"8"}');
    expect([same.statusCode, JSON.parse(same.payload).message]).toEqual([
      400,
      '"TrackID" is given twice in the body (as "TrackID" and "TrackID")',
    ]);
  });

  it('refuses an HTTP/1.1 request without Host with a JSON 400, over a real socket', async () => {
    const server = guarded({});
    await server.start();
    try {
      const res = await rawExchange(server.info.port as number, 'GET /who HTTP/1.1\r\nConnection: close\r\n\r\n');
      expect(res).toMatch(/^HTTP\/1\.1 400 /);
      expect(res).toContain('"message":"the request is not valid HTTP/1.1: it has no Host header"');
    } finally {
      await server.stop();
    }
  });
});
