// The dashboard's page and its files: static, no data in them (the page reads /dashboard/data,
// which needs the API key like every route). Only this service's own files, nothing from elsewhere.
import fs from 'node:fs';
import path from 'node:path';
import Boom, { isBoom } from '@hapi/boom';
import type Hapi from '@hapi/hapi';
import { projectRoot } from '../process/paths';

/** The dashboard's page, script and style sheet. */
const DASHBOARD_DIR = path.join(projectRoot, 'dashboard');

/**
 * The charting library's files, served from node_modules (the box has no internet, so no CDN):
 * uPlot, a small library made for time series. Only these files, by name.
 */
const UPLOT_DIST = path.dirname(require.resolve('uplot'));
const VENDOR_FILES: Record<string, { file: string; type: string }> = {
  'uPlot.iife.min.js': { file: path.join(UPLOT_DIST, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { file: path.join(UPLOT_DIST, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

/** Its headers: no framing, no sniffing, nothing loaded from elsewhere. */
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
};

/** Route GET /dashboard, its assets and the charting library's files. `keyRequired`: the page asks for the API key before its first read. */
export function dashboardRoutes(server: Hapi.Server, keyRequired: boolean): void {
  // The page says whether it needs a key, so that it asks for one before its first read (a 401 would be a console error).
  const page = fs
    .readFileSync(path.join(DASHBOARD_DIR, 'index.html'), 'utf8')
    .replace('<body>', `<body data-key-required="${keyRequired}">`);
  const withHeaders = (request: Hapi.Request, h: Hapi.ResponseToolkit) => {
    const response = request.response;
    if (!isBoom(response)) for (const [name, value] of Object.entries(PAGE_HEADERS)) response.header(name, value);
    return h.continue;
  };
  server.route([
    {
      method: 'GET',
      path: '/dashboard',
      options: {
        handler: (_request, h) => h.response(page).type('text/html; charset=utf-8'),
        ext: { onPreResponse: { method: withHeaders } },
      },
    },
    {
      method: 'GET',
      path: '/dashboard/assets/{file}',
      options: {
        handler: { directory: { path: DASHBOARD_DIR, listing: false, index: false } },
        ext: { onPreResponse: { method: withHeaders } },
      },
    },
    {
      method: 'GET',
      path: '/dashboard/assets/vendor/{file}',
      options: {
        handler: (request, h) => {
          const name = String(request.params.file);
          const vendor = Object.hasOwn(VENDOR_FILES, name) ? VENDOR_FILES[name] : undefined;
          return vendor ? h.file(vendor.file, { confine: false }).type(vendor.type) : Boom.notFound();
        },
        ext: { onPreResponse: { method: withHeaders } },
      },
    },
  ]);
}
