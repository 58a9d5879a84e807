// Memory and start-up footprint of the real service process.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { csv, removeHome, requestRow, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { itWhen } from '../helpers/tools';
import { SERVICE_ENV } from '../../bench/processes';
import { until } from '../helpers/until';

const dist = path.resolve(__dirname, '../../dist');

/** glibc's malloc arenas besides the main one: each a 64 MB-aligned anonymous heap of 64 MB (used part rw, the rest reserved). */
function mallocArenas(pid: number): number {
  const HEAP = 64 << 20;
  const maps = fs
    .readFileSync(`/proc/${pid}/maps`, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [range = '', perms = '', , , , name] = line.split(/\s+/);
      const [start = 0, end = 0] = range.split('-').map((h) => parseInt(h, 16));
      return { start, end, perms, anonymous: !name };
    });
  return maps.filter((m, i) => {
    if (!m.anonymous || m.perms !== 'rw-p' || m.start % HEAP !== 0) return false;
    const next = maps[i + 1];
    const end = next && next.start === m.end && next.perms === '---p' && next.anonymous ? next.end : m.end;
    return end - m.start === HEAP;
  }).length;
}

const glibc = Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);
const itWithArenas = itWhen(glibc ? {} : { glibc: 'a C library with malloc arenas to count; this one is not glibc' }, 'malloc arenas');

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

  it('a started server has not evaluated handlebars, swagger-parser, json-schema-ref-parser or the OpenTelemetry API; the documentation page loads handlebars and renders, a scrape counts CPU without OpenTelemetry', () => {
    // The server composed as the service composes it, documentation included; then GET / (Swagger UI).
    const script = `
      const { validateConfig } = require(${JSON.stringify(path.join(dist, 'lib/process/config.js'))});
      const { createLogger } = require(${JSON.stringify(path.join(dist, 'lib/process/logger.js'))});
      const { createService } = require(${JSON.stringify(path.join(dist, 'lib/service.js'))});
      const { createServer } = require(${JSON.stringify(path.join(dist, 'lib/http/server.js'))});
      const fs = require('node:fs'), os = require('node:os'), path = require('node:path');
      // Files of each package in require's cache: 1 is the stand-in alone, more the package evaluated.
      const files = (pkg) => Object.keys(require.cache).filter((f) => f.includes('/node_modules/' + pkg + '/')).length;
      const evaluated = () =>
        ['handlebars', 'swagger-parser', '@apidevtools/json-schema-ref-parser', 'z-schema', 'js-yaml', '@opentelemetry/api'].filter((p) => files(p) > 1);
      (async () => {
        const home = fs.mkdtempSync(path.join(os.tmpdir(), 'footprint-'));
        const config = validateConfig({ LogLevel: 'silent', TestMode: true, Port: 0 });
        const service = await createService({ home, config, log: createLogger('silent'), version: '0.0.0-test' });
        const server = await createServer(service);
        await server.initialize();
        const atStart = evaluated();
        const page = await server.inject('/');
        const afterPage = evaluated();
        // prom-client's CPU counters, whose module required the OpenTelemetry API, count without it.
        const metrics = await server.inject('/metrics');
        const cpuCounted = /^sorter_integration_process_cpu_seconds_total \\d/m.test(metrics.payload);
        const afterScrape = evaluated();
        service.drain();
        await server.stop();
        await service.close();
        fs.rmSync(home, { recursive: true, force: true });
        console.log(JSON.stringify({ atStart, afterPage, status: page.statusCode, swaggerUi: page.payload.includes('swagger-ui'), cpuCounted, afterScrape }));
      })();`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.resolve(dist, '..'), encoding: 'utf8' }));
    expect(out).toEqual({
      atStart: [],
      afterPage: ['handlebars'],
      status: 200,
      swaggerUi: true,
      cpuCounted: true,
      afterScrape: ['handlebars'],
    });
  });

  itWithArenas(
    'the service runs with two malloc arenas where glibc would give it one for each thread that allocates (its launcher sets them, as npm start and the systemd units run it)',
    async () => {
      expect(SERVICE_ENV.MALLOC_ARENA_MAX).toBe('2');
      const arenasOf = async (env: NodeJS.ProcessEnv) => {
        const home = tempHome({
          'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' },
          'Service_PLC.csv': csv(requestRow('T1'), requestRow('T2')),
        });
        try {
          const svc = await startServiceProcess(home, env);
          // By now each thread that allocates has: the writer, the checkpointer, the pool, V8's helpers.
          for (let i = 0; i < 3; i += 1) expect((await fetch(`${svc.base}/sortation`)).status).toBe(i < 2 ? 210 : 204);
          const arenas = mallocArenas(svc.proc.pid!);
          expect(await svc.stop()).toBe(0);
          return arenas;
        } finally {
          removeHome(home);
        }
      };
      // The helper starts it as deployed; the control, a limit above glibc's own (8 a core).
      expect(await arenasOf({})).toBe(1);
      expect(await arenasOf({ MALLOC_ARENA_MAX: '64' })).toBeGreaterThan(2);
    },
    30_000,
  );

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
      // The schedule left to node-cron (the hourly housekeeping) computed its first run on local
      // time as the service started; those of every few seconds run on the beat (node-cron's next
      // runs after a run: test/lib/functions/cron-local-time.test.ts). Then past two looks of the
      // size bound (every 4 s) and through the HTTP path.
      const offsetsRead = (): number => {
        try {
          return JSON.parse(fs.readFileSync(report, 'utf8')).timezoneOffsets;
        } catch {
          return 0; // not written yet
        }
      };
      await until(() => offsetsRead() > 0, 5000, 'the schedules computed on local time', 50);
      await new Promise((r) => setTimeout(r, 8500));
      expect((await fetch(`${svc.base}/sortation`)).status).toBe(210);
      expect(await svc.stop()).toBe(0);
      const counts = JSON.parse(fs.readFileSync(report, 'utf8'));
      expect(counts.dateTimeFormats).toBe(0);
    } finally {
      removeHome(home);
    }
  }, 20_000);

  it("a connection's page cache stays within PAGE_CACHE_KB as the history grows, where better-sqlite3's default keeps 16 MB of pages (db/connection.ts)", () => {
    // 60,000 rows of 300 bytes, indexed by a random key, written through the writer's kind of
    // connection and read back through the reader's: what each connection grew by, in a process of
    // its own. The same writes with better-sqlite3's default cache_size grow the process by 16 MB.
    // The process's own memory (RssAnon), not its RSS: on Node 24 V8's optimizing compilers page in
    // about 5 MB of Node's binary as they first run, during the writes; file pages, not a cache.
    const script = `
      const fs = require('node:fs'), os = require('node:os'), path = require('node:path');
      const { openDatabase, openReader, PAGE_CACHE_KB } = require(${JSON.stringify(path.join(dist, 'db/connection.js'))});
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'page-cache-'));
      const mb = (bytes) => bytes / 1048576;
      const anon = () => Number(/^RssAnon:\\s+(\\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
      function grow(file, cacheSize) {
        const db = openDatabase(file, { synchronous: 'NORMAL' });
        if (cacheSize) db.pragma('cache_size = ' + cacheSize);
        db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, v TEXT); CREATE INDEX t_k ON t (k)');
        const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
        const pad = 'x'.repeat(300);
        const before = anon();
        for (let b = 0; b < 600; b++) db.transaction(() => { for (let i = 0; i < 100; i++) insert.run(Math.random().toString(36), pad); })();
        const writer = mb(anon() - before);
        const reader = openReader(file);
        if (cacheSize) reader.pragma('cache_size = ' + cacheSize);
        const readBefore = anon();
        const rows = reader.prepare('SELECT count(v) FROM t INDEXED BY t_k WHERE k > ?').pluck().get('');
        const read = mb(anon() - readBefore);
        const pragma = [db.pragma('cache_size', { simple: true }), reader.pragma('cache_size', { simple: true })];
        reader.close();
        db.close();
        return { writer, read, rows, pragma };
      }
      const ours = grow(path.join(dir, 'ours.db'));
      const dflt = grow(path.join(dir, 'default.db'), -16000);
      fs.rmSync(dir, { recursive: true, force: true });
      console.log(JSON.stringify({ PAGE_CACHE_KB, ours, dflt }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.resolve(dist, '..'), encoding: 'utf8' }));
    expect(out.ours.pragma).toEqual([-out.PAGE_CACHE_KB, -out.PAGE_CACHE_KB]);
    expect(out.ours.rows).toBe(60_000);
    expect(out.ours.writer).toBeLessThan(out.PAGE_CACHE_KB / 1024 + 4);
    expect(out.ours.read).toBeLessThan(out.PAGE_CACHE_KB / 1024 + 3);
    // The contrast: the pages stay in the default cache.
    expect(out.dflt.writer).toBeGreaterThan(12);
    expect(out.dflt.read).toBeGreaterThan(8);
  }, 30_000);
  it("the writer's commands for an item leave nothing for the old generation: no row built by an extended spread (lib/host/merged.ts)", () => {
    // The writer thread's commands of an item (its REQUEST and a SCAN queued and delivered into the
    // history, an assignment into the outbox and out on its ACK, the SCAN's tile on the board), run
    // on a real database with the writer's 1 MB semi-space; v8.GCProfiler gives what each
    // young-generation collection moved to the old generation. Rows built with `{ ...columns, more }`
    // moved 1 to 2 KB an item there on Node 20, each freed only by a full collection.
    const script = `
      const fs = require('node:fs'), os = require('node:os'), path = require('node:path'), v8 = require('node:v8');
      const { openDatabase } = require(${JSON.stringify(path.join(dist, 'db/connection.js'))});
      const { writeCommands } = require(${JSON.stringify(path.join(dist, 'db/commands.js'))});
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writer-heap-'));
      const db = openDatabase(path.join(dir, 'q.db'), { synchronous: 'NORMAL' });
      const c = writeCommands(db);
      const item = (n) => {
        const at = new Date().toISOString();
        const request = { Type: 'REQUEST', TrackID: 'T' + n, Barcode: 'B' + n, MessageCode: 210, InductLocation: '1', RecirculationCount: 0, Length: 300, Width: 200, Height: 100, Weight: 1500 };
        const scan = { Type: 'SCAN', Destination: String(n % 20), DestinationStatus: n % 2 ? 'Ready' : 'NotReady', DestinationText: 'T' + n, LightStatus: 'Off', LightColor: 'Off', ButtonID: 0, MessageCode: 211, BatchDoorStatus: null };
        const [r, s] = c.enqueue([request, scan], at);
        c.deliver({ id: r, queue: 'sortation', message: request, receivedAt: at }, { deliveredAt: at, clientAddress: '127.0.0.1', attempt: 1, readProof: 'next-poll' });
        c.deliver({ id: s, queue: 'destination', message: scan, receivedAt: at }, { deliveredAt: at, clientAddress: '127.0.0.1' });
        const o = c.addToOutbox({ kind: 'ASSIGNMENT', body: { TrackID: 'T' + n, Destination: '3', Barcode: 'B' + n } }, '127.0.0.1', at);
        c.removeFromOutbox(o);
      };
      for (let n = 0; n < 1000; n++) item(n); // compiled and warm
      const items = 3000;
      const profiler = new v8.GCProfiler();
      profiler.start();
      for (let n = 1000; n < 1000 + items; n++) item(n);
      const old = (spaces) => spaces.find((s) => s.spaceName === 'old_space').spaceUsedSize;
      let promoted = 0, young = 0;
      for (const g of profiler.stop().statistics)
        if (g.gcType === 'Scavenge') { young++; promoted += old(g.afterGC.heapSpaceStatistics) - old(g.beforeGC.heapSpaceStatistics); }
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
      console.log(JSON.stringify({ young, bytesPerItem: promoted / items }));`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--max-semi-space-size=1', '-e', script], { cwd: path.resolve(dist, '..'), encoding: 'utf8' }),
    );
    expect(out.young).toBeGreaterThan(5); // enough collections to see what each moved
    expect(out.bytesPerItem).toBeLessThan(200);
  }, 60_000);
});
