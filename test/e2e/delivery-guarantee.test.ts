// The delivery guarantee tried from outside: the service runs as its own process, messages are
// committed by another connection to its database (as the sorter link or an operator would),
// and the clients are raw sockets and curl, not the project's reference client.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runAbortLoad } from '../helpers/abort-load';
import { type FedService as Running, startFedService as start } from '../helpers/fed-service';
import { RawConnection } from '../helpers/raw-http';
import { until } from '../helpers/until';
import { itWhen, missingCommands } from '../helpers/tools';

const run = promisify(execFile);
const withCurl = itWhen(missingCommands({ curl: 'apt-get install curl' }), 'delivery guarantee: curl as the client');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
jest.setTimeout(180_000);

/** A client that sends its GET and never reads (its process hangs), then is killed: its kernel resets the connection. */
async function hangThenKill(
  s: Running,
  killAfterMs: number,
  kill: (c: RawConnection) => void | Promise<void> = (c) => c.destroy(),
): Promise<void> {
  const hung = new RawConnection(s.svc.port);
  hung.stall();
  await hung.send('GET /sortation?timeOut=0 HTTP/1.1\r\nHost: x\r\n\r\n');
  await sleep(killAfterMs);
  await kill(hung);
}

describe('delivery guarantee (AtLeastOnce, the default), from outside', () => {
  let s: Running | undefined;
  afterEach(() => s?.stop());

  it('1,000 GETs on raw sockets dropped 0-1 ms after sending, with a backlog: nothing lost', async () => {
    s = await start();
    s.enqueue(1000);
    const received = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const c = new RawConnection(s.svc.port);
      const got: string[] = [];
      c.request('GET', '/sortation?timeOut=0').then(
        (r) => r.status === 212 && got.push(JSON.parse(r.body).TrackID),
        () => {},
      );
      await c.send(''); // resumes after request() has written its bytes (both wait for the connection)
      await sleep(Math.random());
      c.destroy();
      for (const g of got) received.add(g);
    }
    const status = await s.settled();
    // One snapshot of the three tables: a commit between two separate reads could move a message
    // out of the one read second into the one read first, and it would be counted nowhere.
    const { delivered, queued, dead } = s.db.transaction(() => ({
      delivered: s!.history().map((h) => h.track_id),
      queued: s!.db.prepare('SELECT count(*) FROM sortation_queue').pluck().get() as number,
      dead: s!.db.prepare('SELECT track_id, attempts FROM dead_letters').all() as Array<{ track_id: string; attempts: number }>,
    }))();
    // Every message the service counts as delivered reached a client; the rest are still queued,
    // or in the dead letters after MaxDeliveries (10) deliveries without proof of the read: a
    // storm in which every client drops can hand one message to ten of them in a row (one
    // transaction moves a message from its queue table to the history or the dead letters).
    process.stdout.write(
      `DELIVERY-STORM ${JSON.stringify({ delivered: delivered.length, queued, deadLettered: dead.length, returned: status.Delivery.Returned })}\n`,
    );
    expect(delivered.filter((t) => !received.has(t))).toEqual([]);
    expect(delivered.length + queued + dead.length).toBe(1000);
    expect(new Set([...delivered, ...dead.map((d) => d.track_id)]).size).toBe(delivered.length + dead.length);
    for (const d of dead) expect(d.attempts).toBe(10);
    expect(status.Delivery.DeadLettered).toBe(dead.length);
    expect(status.Delivery.Returned.Reset + status.Delivery.Returned.ClosedUnread).toBeGreaterThan(0);
  });

  it('random drops at every moment (4 clients a queue, random timeOut 0..3, 15% dropped, 3,000 messages, 5 runs): nothing lost, duplicates counted', async () => {
    const runs = Number(process.env.DELIVERY_RUNS ?? 5);
    const modes = (process.env.DELIVERY_MODES ?? 'AtLeastOnce').split(',');
    for (const mode of modes) {
      for (let r = 1; r <= runs; r++) {
        s = await start(mode === 'default' ? {} : { Delivery: mode });
        const result = await runAbortLoad({
          port: s.svc.port,
          db: s.db,
          messages: 3000,
          clientsPerQueue: 4,
          abortRate: 0.15,
          seed: 1000 + r,
        });
        const status = await s.settled();
        const rows = s.history();
        const figures = {
          mode,
          run: r,
          ...result,
          redelivered: status.Delivery?.Redelivered,
          returned: status.Delivery?.Returned,
          confirmed: status.Delivery?.Confirmed,
        };
        process.stderr.write(`DELIVERY ${JSON.stringify(figures)}\n`);
        expect(result.aborts).toBeGreaterThan(200);
        if (mode !== 'AtMostOnce') expect(result.lost).toBe(0);
        // Each message left its queue exactly once, and a duplicate is one the service counted.
        expect(rows.length).toBe(3000 - result.lost);
        expect(status['Sortation Q'] + status['Destination Q']).toBe(0);
        if (mode === 'AtLeastOnce') expect(result.duplicates).toBeLessThanOrEqual(status.Delivery.Redelivered);
        await s.stop();
      }
    }
    s = undefined as never;
  });

  withCurl('curl (one request a connection, closed after reading): every message once, confirmed by its close', async () => {
    s = await start();
    s.enqueue(30);
    const got: string[] = [];
    for (let i = 0; i < 31; i++) {
      const { stdout } = await run('curl', ['-s', '-w', '\\n%{http_code}', `${s.svc.base}/sortation?timeOut=0`]);
      const [body = '', code] = stdout.split('\n');
      if (code === '212') got.push(JSON.parse(body).TrackID);
      else expect(code).toBe('204');
    }
    const status = await s.settled();
    expect(got).toEqual(Array.from({ length: 30 }, (_, i) => String(i + 1).padStart(7, '0')));
    expect(status.Delivery).toMatchObject({ Confirmed: { ClientClose: 30 }, Redelivered: 0 });
    expect(s.history().every((h) => h.attempt === 1 && h.read_proof === 'ClientClose')).toBe(true);
  });

  withCurl('HEAD and other methods on the queue paths take nothing', async () => {
    s = await start();
    s.enqueue(3);
    for (const q of ['sortation', 'destination']) {
      const { stdout } = await run('curl', ['-s', '-I', '-o', '/dev/null', '-w', '%{http_code}', `${s.svc.base}/${q}?timeOut=5`]);
      expect(stdout).toBe('204');
      for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const c = new RawConnection(s.svc.port);
        const r = await c.request(method, `/${q}?timeOut=0`);
        expect(r.status).toBe(405);
        c.destroy();
      }
    }
    expect(await s.status()).toMatchObject({ 'Sortation Q': 3, 'Destination Q': 0 });
    expect(s.history()).toEqual([]);
  });

  it('a response read, then the next request, then a reset: not delivered again', async () => {
    const running = (s = await start());
    s.enqueue(1);
    const c = new RawConnection(s.svc.port);
    expect((await c.request('GET', '/sortation?timeOut=0')).status).toBe(212);
    c.request('GET', '/sortation?timeOut=30').catch(() => {}); // a long poll on the same connection
    await until(async () => (await running.status()).WaitingClients['Sortation Q'] === 1, 5000, 'the next request is waiting', 20);
    c.socket.resetAndDestroy();
    const status = await s.settled();
    expect(status).toMatchObject({ 'Sortation Q': 0, Delivery: { Redelivered: 0 } });
    expect(s.history()).toEqual([{ track_id: '0000001', attempt: 1, read_proof: 'NextRequest' }]);
  });

  it('a response read, then a next request the HTTP parser rejects (headers over 16 KB): not delivered again', async () => {
    const running = (s = await start());
    s.enqueue(1);
    const c = new RawConnection(s.svc.port);
    expect((await c.request('GET', '/sortation?timeOut=0')).status).toBe(212);
    await c.send(`GET /sortation?timeOut=0 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17000)}\r\n\r\n`);
    await until(
      async () => (await running.status()).Delivery.Confirmed.NextRequest === 1,
      5000,
      'the rejected request proved the read',
      20,
    );
    c.socket.resetAndDestroy();
    const status = await s.settled();
    expect(status).toMatchObject({ 'Sortation Q': 0, Delivery: { Redelivered: 0 } });
    expect(s.history()).toEqual([{ track_id: '0000001', attempt: 1, read_proof: 'NextRequest' }]);
  });

  it('a client that stops reading and is then killed: its message is delivered to the next client', async () => {
    const running = (s = await start());
    s.enqueue(1);
    await hangThenKill(s, 0, async (hung) => {
      await until(async () => (await running.status()).Delivery.AwaitingProof === 1, 5000, 'its response awaiting proof', 20);
      hung.destroy(); // closing with unread data sends a reset
    });
    await s.settled();
    const next = new RawConnection(s.svc.port);
    const r = await next.request('GET', '/sortation?timeOut=0');
    expect(r.status).toBe(212);
    expect(r.headers['x-delivery-attempt']).toBe('2');
    next.destroy();
    const status = await s.settled();
    expect(status.Delivery).toMatchObject({ Returned: { Reset: 1 }, Redelivered: 1 });
    expect(s.history()).toEqual([{ track_id: '0000001', attempt: 2, read_proof: 'ClientClose' }]);
  });

  it('a kept-alive client that read and then idles: asked by a close after VisibilityTimeoutSeconds, its clean close confirms', async () => {
    s = await start({ VisibilityTimeoutSeconds: 1 });
    s.enqueue(1);
    const idle = new RawConnection(s.svc.port);
    expect((await idle.request('GET', '/sortation?timeOut=0')).status).toBe(212);
    // Read, and nothing proves it yet (looked at once: after VisibilityTimeoutSeconds the service asks).
    expect((await s.status()).Delivery.AwaitingProof).toBe(1);
    // The service closes the connection; this client, like HTTP client libraries, closes in answer.
    for (let i = 0; i < 100 && !idle.closed; i++) await sleep(20);
    expect(idle.closed).toBe(true);
    const status = await s.settled();
    expect(status.Delivery).toMatchObject({ Confirmed: { ServerClose: 1 }, Redelivered: 0 });
    expect(status['Sortation Q']).toBe(0);
  });
});

describe('Delivery AtMostOnce (the behaviour before the guarantee), from outside', () => {
  let s: Running | undefined;
  afterEach(() => s?.stop());

  it('a client that stops reading and is then killed loses its message: no second delivery', async () => {
    const running = (s = await start({ Delivery: 'AtMostOnce' }));
    s.enqueue(1);
    await hangThenKill(s, 0, async (hung) => {
      await until(async () => (await running.status()).Delivery.Confirmed.Grace === 1, 5000, 'its grace passed without a failure', 20);
      hung.destroy();
    });
    const status = await s.settled();
    expect(status).toMatchObject({ 'Sortation Q': 0, Delivery: { Mode: 'AtMostOnce', Confirmed: { Grace: 1 } } });
    expect(s.history()).toEqual([{ track_id: '0000001', attempt: 1, read_proof: 'Grace' }]);
  });

  it('still uses the proofs it has: a next request confirms at once, a reset before the grace gives back', async () => {
    s = await start({ Delivery: 'AtMostOnce' });
    s.enqueue(2);
    const c = new RawConnection(s.svc.port);
    expect((await c.request('GET', '/sortation?timeOut=0')).status).toBe(212);
    expect((await c.request('GET', '/sortation?timeOut=0')).status).toBe(212);
    await s.settled(); // the second: no failure within the grace
    c.destroy();
    expect(s.history().map((h) => h.read_proof)).toEqual(['NextRequest', 'Grace']);
    s.enqueue(1, 3);
    await hangThenKill(s, 1, (hung) => void hung.socket.resetAndDestroy()); // a reset within the grace: not read
    await s.settled();
    expect((await s.status())['Sortation Q']).toBe(1);
  });
});
