// Optional API keys (lib/http/auth.ts), checked by the request guards on a real hapi server: the key in
// X-API-Key or as a bearer token, the 401s and what they say, the paths left open, and the roles.
import Hapi from '@hapi/hapi';
import { permits } from '../../../lib/http/auth';
import { guardRequests } from '../../../lib/http/guards';

let server: Hapi.Server;
beforeAll(() => {
  server = Hapi.server();
  guardRequests(server, { TrustedProxies: [], ApiKeys: ['first-key', 'second-key'] });
  for (const path of [
    '/status',
    '/',
    '/swagger.json',
    '/openapi.json',
    '/swaggerui/index.html',
    '/dashboard',
    '/dashboard/assets/app.js',
    '/dashboard/data',
  ])
    server.route({ method: 'GET', path, handler: () => 'ok' });
});
const get = (url: string, headers: Record<string, string> = {}) => server.inject({ url, headers });

describe('apiKeyCheck', () => {
  it('lets a request with any of the keys through, in X-API-Key or as a bearer token', async () => {
    for (const headers of <Array<Record<string, string>>>[
      { 'x-api-key': 'first-key' },
      { 'x-api-key': 'second-key' },
      { authorization: 'Bearer second-key' },
      { authorization: 'bearer first-key' },
    ]) {
      expect((await get('/status', headers)).statusCode).toBe(200);
    }
  });

  it('401 saying whether the key is missing or wrong', async () => {
    const missing = await get('/status');
    expect([missing.statusCode, JSON.parse(missing.payload).message]).toEqual([401, 'missing X-API-Key header']);
    for (const headers of <Array<Record<string, string>>>[
      { 'x-api-key': 'first-ke' },
      { 'x-api-key': 'first-key ' },
      { authorization: 'Bearer nope' },
      { authorization: 'Basic Zmlyc3Qta2V5' },
    ]) {
      const res = await get('/status', headers);
      expect([res.statusCode, JSON.parse(res.payload).message]).toEqual([
        401,
        headers.authorization?.startsWith('Basic') ? 'missing X-API-Key header' : 'wrong X-API-Key',
      ]);
    }
    // X-API-Key is the one looked at when both are given.
    expect((await get('/status', { 'x-api-key': 'wrong', authorization: 'Bearer first-key' })).statusCode).toBe(401);
  });

  it('leaves open the documentation and the dashboard page and files, not the dashboard data', async () => {
    for (const path of ['/', '/swagger.json', '/openapi.json', '/swaggerui/index.html', '/dashboard', '/dashboard/assets/app.js'])
      expect([path, (await get(path)).statusCode]).toEqual([path, 200]);
    expect((await get('/dashboard/data')).statusCode).toBe(401);
  });
});

describe('roles', () => {
  it('permits: a plain key everything, operator what monitor may, wcs its own routes only', () => {
    const table = (['all', 'wcs', 'operator', 'monitor'] as const).map((role) => [
      role,
      (['wcs', 'operator', 'monitor'] as const).filter((access) => permits(role, access)),
    ]);
    expect(table).toEqual([
      ['all', ['wcs', 'operator', 'monitor']],
      ['wcs', ['wcs']],
      ['operator', ['operator', 'monitor']],
      ['monitor', ['monitor']],
    ]);
  });

  it('names a plain key by its place and a named key by its name; the key itself is in no answer', async () => {
    const s = Hapi.server();
    guardRequests(s, { TrustedProxies: [], ApiKeys: ['plain-secret', { Name: 'wcs-host', Key: 'wcs-secret', Role: 'wcs' }] });
    s.route({
      method: 'GET',
      path: '/status',
      options: {
        app: { query: [], payload: [], access: 'monitor' },
        handler: (request) => (request.app as { caller: unknown }).caller as object,
      },
    });
    expect(JSON.parse((await s.inject({ url: '/status', headers: { 'x-api-key': 'plain-secret' } })).payload)).toEqual({
      name: 'ApiKeys[0]',
      role: 'all',
    });
    const refused = await s.inject({ url: '/status', headers: { 'x-api-key': 'wcs-secret' } });
    expect([refused.statusCode, JSON.parse(refused.payload).message]).toEqual([
      403,
      '/status needs a monitor or operator key; the key wcs-host has the wcs role',
    ]);
    expect(refused.payload).not.toContain('wcs-secret');
  });
});
