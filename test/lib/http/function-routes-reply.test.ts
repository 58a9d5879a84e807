// The reply of lib/http/function-routes.ts (handler results as HTTP) on a real hapi server of its own, listening on loopback, with the service's
// real dispatcher and delivery tracker on a real SQLite file: how each handler result becomes
// HTTP, a message response and its proof of read, and the watch on a waiting client's connection.
// One service for the file (its start is most of the time); each test queues messages of its own.
import Hapi from '@hapi/hapi';
import { type ReplyContext, goneWatch, reply } from '../../../lib/http/function-routes';
import { empty, ok, text, unavailable } from '../../../lib/functions/define';
import type { InductDto, VerifyDto } from '../../../model/messages';
import { RawConnection, rawExchange } from '../../helpers/raw-http';
import { type TestService, testService } from '../../helpers/service';
import { until } from '../../helpers/until';
import * as messages from '../../helpers/messages';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestService;
let server: Hapi.Server;
let port: number;
/** What the routes below saw, in order. */
let events: string[];

const induct = (trackId: string): InductDto => messages.induct(trackId, { Barcode: `B${trackId}` });
const verify = (trackId: string): VerifyDto => ({
  Type: 'VERIFY',
  TrackID: trackId,
  Barcode: `B${trackId}`,
  Destination: 'D007',
  MessageCode: 212,
});
const queued = () => t.service.db.prepare('SELECT id, track_id AS trackId FROM sortation_queue ORDER BY id').all();
/** The deliveries of one item (every test has its own). */
const history = (trackId: string) =>
  t.service.db
    .prepare('SELECT message_id AS id, attempt, read_proof AS proof FROM delivered_history WHERE track_id = ? ORDER BY id')
    .all(trackId);

beforeEach(async () => {
  events = [];
  await t.service.writer.run('clearQueues', []);
});

beforeAll(async () => {
  t = await testService({ TestMode: true });
  const context: ReplyContext = { deliveries: t.service.deps.deliveries, wake: t.service.deps.wake };
  const take = () => t.service.deps.dispatchers.sortation.take(0);
  server = Hapi.server({ host: '127.0.0.1', port: 0 });
  t.service.deps.deliveries.attach(server.listener);
  const results = {
    ok: ok({ Accepted: true }, 201),
    empty,
    text: text('queue_depth 3\n', 'text/plain; version=0.0.4'),
    unavailable: unavailable('the storage is stalled', 7),
  };
  server.route([
    {
      method: 'GET',
      path: '/result/{kind}',
      handler: (request, h) => reply(request, h, results[request.params.kind as keyof typeof results], context),
    },
    {
      method: 'GET',
      path: '/message',
      handler: async (request, h) => reply(request, h, { kind: 'message', claim: (await take())! }, context),
    },
    {
      // The client is gone before its message is handed out.
      method: 'GET',
      path: '/message-to-gone',
      handler: async (request, h) => {
        await until(() => request.raw.req.socket.destroyed, 2000);
        const result = reply(request, h, { kind: 'message', claim: (await take())! }, context);
        events.push('replied');
        return result;
      },
    },
    {
      method: 'GET',
      path: '/gone',
      handler: async (request, h) => {
        await new Promise<void>((resolve) => goneWatch(request)(resolve));
        events.push('gone');
        return h.abandon;
      },
    },
    {
      method: 'GET',
      path: '/unwatched',
      handler: async (request, h) => {
        const unwatch = goneWatch(request)(() => events.push('told after unwatch'));
        unwatch();
        await until(() => request.raw.req.socket.destroyed, 2000);
        await sleep(20);
        // Asked after the connection closed: told at once.
        goneWatch(request)(() => events.push('told at once'));
        return h.abandon;
      },
    },
  ]);
  await server.start();
  port = server.info.port as number;
});
afterAll(async () => {
  await server.stop({ timeout: 500 });
  await t.close();
});

describe('reply', () => {
  it('turns each result into its response: 201 JSON, 204 without a body, text with its type, 503 with Retry-After', async () => {
    const created = await server.inject('/result/ok');
    expect([created.statusCode, JSON.parse(created.payload)]).toEqual([201, { Accepted: true }]);
    const none = await server.inject('/result/empty');
    expect([none.statusCode, none.payload, none.headers['content-type']]).toEqual([204, '', undefined]);
    const metrics = await server.inject('/result/text');
    expect([metrics.statusCode, metrics.payload, metrics.headers['content-type']]).toEqual([
      200,
      'queue_depth 3\n',
      'text/plain; version=0.0.4; charset=utf-8',
    ]);
    const stalled = await server.inject('/result/unavailable');
    expect(stalled.statusCode).toBe(503);
    expect(stalled.headers['retry-after']).toBe('7');
    expect(JSON.parse(stalled.payload)).toEqual({ statusCode: 503, error: 'Service Unavailable', message: 'the storage is stalled' });
  });

  it("writes a message with its type's status, its id and attempt; it leaves the queue once the client proves the read", async () => {
    const [requestId, verifyId] = await t.publish([induct('PROOF'), verify('PROOF')]);
    const client = new RawConnection(port);
    const first = await client.request('GET', '/message');
    expect(first.status).toBe(210);
    expect(first.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-cache',
      'x-message-id': String(requestId),
      'x-delivery-attempt': '1',
    });
    expect(JSON.parse(first.body)).toStrictEqual(induct('PROOF'));
    // Not removed before there is proof: the client has done nothing since reading it.
    await sleep(50);
    expect(queued()).toEqual([
      { id: requestId, trackId: 'PROOF' },
      { id: verifyId, trackId: 'PROOF' },
    ]);
    // The next request on the same connection proves the first response was read.
    const second = await client.request('GET', '/message');
    expect([second.status, second.headers['x-message-id']]).toEqual([212, String(verifyId)]);
    expect(JSON.parse(second.body)).toStrictEqual(verify('PROOF'));
    await until(() => history('PROOF').length === 1);
    expect(history('PROOF')).toEqual([{ id: requestId, attempt: 1, proof: 'NextRequest' }]);
    client.socket.end(); // a clean close after reading: proof of the last one
    await until(() => history('PROOF').length === 2);
    expect(history('PROOF')[1]).toEqual({ id: verifyId, attempt: 1, proof: 'ClientClose' });
    expect(queued()).toEqual([]);
  });

  it("names the message type in the status line's reason phrase", async () => {
    await t.publish([verify('REASON')]);
    const response = await rawExchange(port, 'GET /message HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 212 Verify\r\n/);
  });

  it('answers a message through server.inject as read (Injected)', async () => {
    const [id] = await t.publish([induct('INJECT')]);
    const res = await server.inject('/message');
    expect(res.statusCode).toBe(210);
    await until(() => history('INJECT').length === 1);
    expect(history('INJECT')).toEqual([{ id, attempt: 1, proof: 'Injected' }]);
  });

  it('writes nothing to a client already gone and puts the message back unmarked: its next delivery is attempt 1', async () => {
    const [id] = await t.publish([induct('GONE')]);
    const client = new RawConnection(port);
    await client.send('GET /message-to-gone HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(30);
    client.destroy();
    await until(() => events.includes('replied'));
    expect(t.service.deps.dispatchers.sortation.inFlight).toBe(0);
    expect(queued()).toEqual([{ id, trackId: 'GONE' }]);
    expect(history('GONE')).toEqual([]);
    const again = await server.inject('/message');
    expect([again.statusCode, again.headers['x-message-id'], again.headers['x-delivery-attempt']]).toEqual([210, String(id), '1']);
  });
});

describe('goneWatch', () => {
  it("tells the handler when its client's connection closes", async () => {
    const client = new RawConnection(port);
    await client.send('GET /gone HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(50);
    expect(events).toEqual([]);
    client.destroy();
    await until(() => events.length === 1);
    expect(events).toEqual(['gone']);
  });

  it('says nothing once unwatched, and answers at once about a connection already closed', async () => {
    const client = new RawConnection(port);
    await client.send('GET /unwatched HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(30);
    client.destroy();
    await until(() => events.length > 0);
    await sleep(30);
    expect(events).toEqual(['told at once']);
  });
});
