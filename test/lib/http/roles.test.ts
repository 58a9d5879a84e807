// Keys and roles on the real server (server.inject): every route of the manifest with no key, an
// unknown key, a key of each role and a plain key of the old list; 401 and 403 with a JSON reason.
import { httpTriggers, loadManifest } from '../../../lib/functions/manifest';
import { type TestService, testService } from '../../helpers/service';

const KEYS = [
  'plain-old-key',
  { Name: 'wcs-host', Key: 'wcs-secret', Role: 'wcs' },
  { Name: 'shift-lead', Key: 'operator-secret', Role: 'operator' },
  { Name: 'prometheus', Key: 'monitor-secret', Role: 'monitor' },
];
const ROLE_KEYS = { wcs: 'wcs-secret', operator: 'operator-secret', monitor: 'monitor-secret' } as const;
/** Who may call a route of each access (docs/operations.md, "Who may do what"). */
const ALLOWED: Record<string, Array<keyof typeof ROLE_KEYS>> = { wcs: ['wcs'], operator: ['operator'], monitor: ['monitor', 'operator'] };

const routes = httpTriggers(loadManifest()).map((t) => ({
  ...t,
  url:
    t.path.replace('{TrackID}', '0004711').replace('{id}', '1') +
    (t.path === '/sortation' || t.path === '/destination' ? '?timeOut=0' : ''),
}));

let t: TestService;
beforeAll(async () => (t = await testService({ TestMode: true, ApiKeys: KEYS })));
afterAll(() => t.close());

const call = (method: string, url: string, key?: string) =>
  t.server.inject({
    method,
    url,
    headers: { ...(key && { 'x-api-key': key }), ...(method === 'POST' && { 'content-type': 'application/json' }) },
    payload: method === 'POST' ? '{}' : undefined,
  });

describe('keys and roles', () => {
  it('every HTTP route of the manifest declares who may call it', () => {
    expect(routes.length).toBeGreaterThanOrEqual(14);
    for (const r of routes) expect([r.path, r.access]).toEqual([r.path, expect.stringMatching(/^(wcs|operator|monitor)$/)]);
    expect(Object.fromEntries(routes.map((r) => [`${r.method} ${r.path}`, r.access]))).toMatchObject({
      'GET /sortation': 'wcs',
      'POST /sortation': 'wcs',
      'GET /destination': 'wcs',
      'POST /destination': 'wcs',
      'GET /status': 'monitor',
      'GET /metrics': 'monitor',
      'GET /health/live': 'monitor',
      'GET /health/ready': 'monitor',
      'GET /alarms': 'monitor',
      'GET /dashboard/data': 'operator',
      'POST /alarms/{id}/ack': 'operator',
      'POST /dead-letters/requeue': 'operator',
      'GET /items/{TrackID}': 'operator',
      'GET /dead-letters': 'operator',
    });
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: 401 without a key and with an unknown one, 403 for a wrong role, through for the right roles and the plain key',
    async (_name, r) => {
      const missing = await call(r.method, r.url);
      expect([missing.statusCode, JSON.parse(missing.payload)]).toEqual([
        401,
        { statusCode: 401, error: 'Unauthorized', message: 'missing X-API-Key header' },
      ]);
      const unknown = await call(r.method, r.url, 'no-such-key');
      expect([unknown.statusCode, JSON.parse(unknown.payload).message]).toEqual([401, 'wrong X-API-Key']);
      const plain = await call(r.method, r.url, 'plain-old-key');
      expect([401, 403]).not.toContain(plain.statusCode);
      for (const [role, key] of Object.entries(ROLE_KEYS)) {
        const res = await call(r.method, r.url, key);
        if ((ALLOWED[r.access ?? 'operator'] ?? []).includes(role as keyof typeof ROLE_KEYS)) {
          expect([role, [401, 403].includes(res.statusCode)]).toEqual([role, false]);
        } else {
          expect([role, res.statusCode]).toEqual([role, 403]);
          const body = JSON.parse(res.payload);
          expect(body).toMatchObject({ statusCode: 403, error: 'Forbidden' });
          expect(body.message).toContain(r.path.replace('{TrackID}', '0004711').replace('{id}', '1'));
          // The reason names the key by its name, never the key itself.
          expect(body.message).not.toContain(key);
        }
      }
    },
  );

  it('leaves the documentation and the dashboard page open', async () => {
    for (const url of ['/', '/openapi.json', '/dashboard']) expect([url, (await t.server.inject(url)).statusCode]).toEqual([url, 200]);
  });
});
