// createServer as lib/main.ts calls it, on a service with a real SQLite file: the server it returns
// (initialized, not listening), its routes from the manifest, what a request meets before and
// after its handler (Host check, validation, 405, metrics), its listener's limits, and a stop that
// asks clients holding a message for their proof first. The HTTP contract in detail is
// test/http/contract.test.ts.
import Hapi from '@hapi/hapi';
import { type Manifest, httpTriggers, loadManifest } from '../../../lib/functions/manifest';
import { createServer } from '../../../lib/http/server';
import { RawConnection, rawExchange } from '../../helpers/raw-http';
import { type TestService, testService } from '../../helpers/service';
import { until } from '../../helpers/until';
import { induct } from '../../helpers/messages';

// One service for the file (its start is most of the time); the tests leave its queues empty.
let t: TestService;
let server: Hapi.Server;
const manifest = loadManifest();
beforeAll(async () => {
  t = await testService({ TestMode: true });
  server = await createServer(t.service, { manifest });
});
afterAll(async () => {
  await server.stop({ timeout: 500 });
  await t.close();
});

/** The server listening on loopback, stopped at the end of the test. */
async function listening(fn: (port: number, s: Hapi.Server) => Promise<void>): Promise<void> {
  const s = await createServer(t.service, { manifest, port: 0, host: '127.0.0.1' });
  await s.start();
  try {
    await fn(s.info.port as number, s);
  } finally {
    await s.stop({ timeout: 500 });
  }
}

describe('createServer', () => {
  it('returns the server initialized and not listening: ready for server.inject', async () => {
    expect(server.info.started).toBe(0);
    expect(server.listener.listening).toBe(false);
    expect((await server.inject('/status')).statusCode).toBe(200);
  });

  it('routes every HTTP trigger of the manifest, and 405 for the other methods on those paths', async () => {
    const routes = server.table().map((r) => `${r.method.toUpperCase()} ${r.path}`);
    const triggers = httpTriggers(manifest);
    expect(triggers.length).toBeGreaterThan(5);
    for (const { method, path } of triggers) {
      expect(routes).toContain(`${method} ${path}`);
      expect(routes).toContain(`* ${path}`);
    }
    const res = await server.inject({ method: 'DELETE', url: '/sortation' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(JSON.parse(res.payload)).toEqual({
      statusCode: 405,
      error: 'Method Not Allowed',
      message: 'DELETE is not allowed on /sortation; allowed: GET, HEAD, POST',
    });
  });

  it('serves only what the manifest it is given declares', async () => {
    const onlyStatus: Manifest = {
      ...manifest,
      functions: Object.fromEntries(
        Object.entries(manifest.functions).filter(([, fn]) => fn.events.some((e) => 'http' in e && e.http.path === '/status')),
      ),
    };
    const small = await createServer(t.service, { manifest: onlyStatus });
    try {
      expect((await small.inject('/status')).statusCode).toBe(200);
      expect((await small.inject('/sortation?timeOut=0')).statusCode).toBe(404);
    } finally {
      await small.stop();
    }
  });

  it('an empty queue answers 204 with no body, counted as an empty receive', async () => {
    const empties = async () =>
      (await t.service.deps.metrics.emptyReceives.get()).values.find((v) => v.labels.queue === 'sortation')?.value ?? 0;
    const before = await empties();
    const res = await server.inject('/sortation?timeOut=0');
    expect([res.statusCode, res.payload]).toEqual([204, '']);
    expect(await empties()).toBe(before + 1);
  });

  it('400 with a JSON error naming the field for bad input, the query and the body alike', async () => {
    const query = await server.inject('/sortation?timeOut=soon');
    expect(query.statusCode).toBe(400);
    expect(JSON.parse(query.payload).message).toMatch(/timeOut/);
    const body = await server.inject({ method: 'POST', url: '/sortation', payload: { Destination: 'D1' } });
    expect(body.statusCode).toBe(400);
    expect(JSON.parse(body.payload).message).toMatch(/TrackID/);
    const twice = await server.inject({
      method: 'POST',
      url: '/sortation',
      payload: '{"TrackID":"1","trackid":"2","Destination":"D1"}',
      headers: { 'content-type': 'application/json' },
    });
    expect([twice.statusCode, JSON.parse(twice.payload).message]).toEqual([
      400,
      '"TrackID" is given twice in the body (as "TrackID" and "trackid")',
    ]);
  });

  it('gives its listener limits for slow clients: 10 s for the headers, 20 s for the whole request', () => {
    expect(server.listener.headersTimeout).toBe(10_000);
    expect(server.listener.requestTimeout).toBe(20_000);
  });
});

describe('createServer, listening', () => {
  it('refuses an HTTP/1.1 request without Host with a JSON 400; HTTP/1.0 needs none', async () => {
    await listening(async (port) => {
      const noHost = await rawExchange(port, 'GET /status HTTP/1.1\r\nConnection: close\r\n\r\n');
      expect(noHost).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(noHost.slice(noHost.indexOf('\r\n\r\n') + 4))).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: 'the request is not valid HTTP/1.1: it has no Host header',
      });
      expect(await rawExchange(port, 'GET /status HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    });
  });

  it('a stop first asks a client holding an unproven message, and its clean close in answer commits it', async () => {
    const [id] = await t.publish([induct('AT-STOP')]);
    await listening(async (port, s) => {
      const client = new RawConnection(port);
      const res = await client.request('GET', '/sortation?timeOut=0');
      expect([res.status, res.headers['x-message-id']]).toEqual([210, String(id)]);
      expect(t.service.deps.deliveries.status().AwaitingProof).toBe(1);
      await s.stop({ timeout: 2000 });
      await until(() => client.closed);
    });
    // The proof is taken at once; the commit of the delivery follows through the writer.
    const row = () =>
      t.service.db.prepare('SELECT message_id AS id, read_proof AS proof FROM delivered_history WHERE track_id = ?').get('AT-STOP');
    await until(() => row() !== undefined);
    expect(row()).toEqual({ id, proof: 'ServerClose' });
    expect(t.service.deps.deliveries.status().AwaitingProof).toBe(0);
    expect(t.service.db.prepare('SELECT count(*) FROM sortation_queue').pluck().get()).toBe(0);
  });
});
