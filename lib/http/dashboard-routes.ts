// The dashboard's page and its files: static, no data in them (the page reads /dashboard/data,
// which needs the API key like every route). Only this service's own files, nothing from elsewhere.
import fs from 'node:fs';
import path from 'node:path';
import { isBoom } from '@hapi/boom';
import type Hapi from '@hapi/hapi';
import { projectRoot } from '../process/paths';

/** The dashboard's page, script and style sheet. */
const DASHBOARD_DIR = path.join(projectRoot, 'dashboard');

/** Its headers: no framing, no sniffing, nothing loaded from elsewhere. */
const PAGE_HEADERS = { 'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'", 'X-Content-Type-Options': 'nosniff' };

/** Route GET /dashboard and its assets. `keyRequired`: the page asks for the API key before its first read. */
export function dashboardRoutes(server: Hapi.Server, keyRequired: boolean): void {
  // The page says whether it needs a key, so that it asks for one before its first read (a 401 would be a console error).
  const page = fs.readFileSync(path.join(DASHBOARD_DIR, 'index.html'), 'utf8').replace('<body>', `<body data-key-required="${keyRequired}">`);
  const withHeaders = (request: Hapi.Request, h: Hapi.ResponseToolkit) => {
    const response = request.response;
    if (!isBoom(response)) for (const [name, value] of Object.entries(PAGE_HEADERS)) response.header(name, value);
    return h.continue;
  };
  server.route([
    { method: 'GET', path: '/dashboard', options: { handler: (_request, h) => h.response(page).type('text/html; charset=utf-8'), ext: { onPreResponse: { method: withHeaders } } } },
    { method: 'GET', path: '/dashboard/assets/{file}', options: { handler: { directory: { path: DASHBOARD_DIR, listing: false, index: false } }, ext: { onPreResponse: { method: withHeaders } } } },
  ]);
}
