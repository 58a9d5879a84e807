// Memory and start-up footprint of the real service process.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { csv, removeHome, requestRow, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';

const dist = path.resolve(__dirname, '../../dist');

describe('memory footprint of the compiled service', () => {
  it('loading the HTTP server does not evaluate the Swagger UI browser bundle (lib/http/swagger-footprint.ts)', () => {
    const script = `
      require(${JSON.stringify(path.join(dist, 'lib/http/server.js'))});
      const loaded = Object.keys(require.cache).filter((f) => f.includes('swagger-ui-dist'));
      const ui = require('swagger-ui-dist');
      console.log(JSON.stringify({ loaded, keys: Object.keys(ui).sort(), folder: ui.getAbsoluteFSPath() }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.resolve(dist, '..'), encoding: 'utf8' }));
    expect(out.loaded.some((f: string) => f.endsWith('swagger-ui-bundle.js'))).toBe(false);
    expect(out.keys).toEqual(['absolutePath', 'getAbsoluteFSPath']);
    expect(out.folder).toMatch(/swagger-ui-dist$/);
  });

  it('a started server has not evaluated handlebars, swagger-parser or json-schema-ref-parser; the documentation page loads handlebars and renders', () => {
    // The server composed as the service composes it, documentation included; then GET / (Swagger UI).
    const script = `
      const { validateConfig } = require(${JSON.stringify(path.join(dist, 'lib/process/config.js'))});
      const { createLogger } = require(${JSON.stringify(path.join(dist, 'lib/process/logger.js'))});
      const { createService } = require(${JSON.stringify(path.join(dist, 'lib/service.js'))});
      const { createServer } = require(${JSON.stringify(path.join(dist, 'lib/http/server.js'))});
      const fs = require('node:fs'), os = require('node:os'), path = require('node:path');
      // Files of each package in require's cache: 1 is the stand-in alone, more the package evaluated.
      const files = (pkg) => Object.keys(require.cache).filter((f) => f.includes('/node_modules/' + pkg + '/')).length;
      const evaluated = () => ['handlebars', 'swagger-parser', '@apidevtools/json-schema-ref-parser', 'z-schema', 'js-yaml'].filter((p) => files(p) > 1);
      (async () => {
        const home = fs.mkdtempSync(path.join(os.tmpdir(), 'footprint-'));
        const config = validateConfig({ LogLevel: 'silent', TestMode: true, Port: 0 });
        const service = await createService({ home, config, log: createLogger('silent'), version: '0.0.0-test' });
        const server = await createServer(service);
        await server.initialize();
        const atStart = evaluated();
        const page = await server.inject('/');
        const afterPage = evaluated();
        service.drain();
        await server.stop();
        await service.close();
        fs.rmSync(home, { recursive: true, force: true });
        console.log(JSON.stringify({ atStart, afterPage, status: page.statusCode, swaggerUi: page.payload.includes('swagger-ui') }));
      })();`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.resolve(dist, '..'), encoding: 'utf8' }));
    expect(out).toEqual({ atStart: [], afterPage: ['handlebars'], status: 200, swaggerUi: true });
  });

  it('the running service constructs no Intl.DateTimeFormat: its schedules run on local time without ICU locale data (patches/node-cron+4.6.0.patch)', async () => {
    // The first Intl.DateTimeFormat of a process touches about 7 MB of ICU data in Node's binary
    // and allocates 2 MB more: node-cron made one for every schedule, patched it makes none.
    const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' }, 'Service_PLC.csv': csv(requestRow('T1')) });
    const report = path.join(home, 'intl.json');
    try {
      const svc = await startServiceProcess(home, {
        NODE_OPTIONS: `--require ${path.resolve(__dirname, '../fixtures/count-intl.cjs')}`,
        COUNT_INTL_REPORT: report,
      });
      // Past a run of the history bound (every 5 s) and its next schedule, and through the HTTP path.
      await new Promise((r) => setTimeout(r, 5500));
      expect((await fetch(`${svc.base}/sortation`)).status).toBe(210);
      expect(await svc.stop()).toBe(0);
      const counts = JSON.parse(fs.readFileSync(report, 'utf8'));
      expect(counts.dateTimeFormats).toBe(0);
      expect(counts.timezoneOffsets).toBeGreaterThan(0); // the schedules were computed, on local time
    } finally {
      removeHome(home);
    }
  }, 20_000);
});
