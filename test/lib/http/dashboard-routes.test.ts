// The dashboard's page and files (lib/http/dashboard-routes.ts) on a bare hapi server: the page
// says whether it needs a key, both carry the security headers, and only the dashboard's own
// folder is served. The data behind it: test/http/dashboard.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import { dashboardRoutes } from '../../../lib/http/dashboard-routes';
import { projectRoot } from '../../../lib/process/paths';

async function dashboard(keyRequired: boolean) {
  const server = Hapi.server();
  await server.register(Inert);
  dashboardRoutes(server, keyRequired);
  return server;
}

describe('dashboardRoutes', () => {
  it('serves the page saying whether it needs a key, as HTML with the security headers', async () => {
    for (const keyRequired of [true, false]) {
      const res = await (await dashboard(keyRequired)).inject('/dashboard');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe("default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.payload).toContain(`<body data-key-required="${keyRequired}">`);
    }
  });

  it("serves the dashboard folder's files, and nothing outside it or not there", async () => {
    const server = await dashboard(false);
    const script = fs.readdirSync(path.join(projectRoot, 'dashboard')).find((f) => f.endsWith('.js'))!;
    const res = await server.inject(`/dashboard/assets/${script}`);
    expect(res.statusCode).toBe(200);
    expect(res.payload).toBe(fs.readFileSync(path.join(projectRoot, 'dashboard', script), 'utf8'));
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    const status = async (url: string) => (await server.inject(url)).statusCode;
    expect([
      await status('/dashboard/assets/..%2Fpackage.json'),
      await status('/dashboard/assets/%2E%2E%2Fpackage.json'),
      await status('/dashboard/assets/missing.js'),
    ]).toEqual([403, 403, 404]);
  });
});
