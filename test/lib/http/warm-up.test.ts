// The warm-up (lib/http/warm-up.ts): the service asks itself over loopback what a WCS asks first,
// on a real server and a real database; nothing it asks is metered, logged, taken or written, and a
// warm-up that cannot connect says why instead of failing the start.
import { ASKED, warmUp } from '../../../lib/http/warm-up';
import { induct } from '../../helpers/messages';
import { type TestService, testService } from '../../helpers/service';

jest.setTimeout(20000);

describe('the warm-up', () => {
  let t: TestService;
  afterEach(() => t.close());

  it('asks HEAD on both queues, GET /status and both POSTs, each round; takes and writes nothing; leaves no trace in the metrics', async () => {
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0, AccessLog: 'all' });
    await t.server.start();
    await t.publish([induct('WARM1')]);
    const done = await warmUp(t.server, [], 4);
    expect(done).toMatchObject({ requests: 20, answers: { 200: 4, 204: 8, 400: 8 }, error: null });
    // Nothing went to the sorter's outbox: both POSTs were refused by their schemas.
    expect(t.service.db.prepare('SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM outbox_history)').pluck().get()).toBe(0);
    // The REQUEST is still at the head of its queue, never handed out.
    const port = t.server.info.port as number;
    const got = await fetch(`http://127.0.0.1:${port}/sortation`);
    expect(got.status).toBe(210);
    expect(await got.json()).toMatchObject({ TrackID: 'WARM1' });
    expect(got.headers.get('x-delivery-attempt')).toBe('1');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).not.toMatch(/method="HEAD"/);
    expect(metrics).not.toMatch(/route="\/status"/);
    expect(metrics).not.toMatch(/method="POST"/);
    // Once it is over, a HEAD of anyone else is metered as before.
    expect((await fetch(`http://127.0.0.1:${port}/destination`, { method: 'HEAD' })).status).toBe(204);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/route="\/destination",method="HEAD",status="204"/);
  });

  it('with ApiKeys: asks each path with a key of the role it needs', async () => {
    const keys = [
      { Name: 'monitor', Key: 'warm-up-monitor', Role: 'monitor' as const },
      { Name: 'wcs', Key: 'warm-up-wcs', Role: 'wcs' as const },
    ];
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0, ApiKeys: keys });
    await t.server.start();
    expect(await warmUp(t.server, keys, 2)).toMatchObject({ requests: 10, answers: { 200: 2, 204: 4, 400: 4 }, error: null });
  });

  it('with only an operator key: /status (monitor) is answered, the queues (wcs) 403: their path up to the role check still runs', async () => {
    const keys = [{ Name: 'operator', Key: 'warm-up-operator', Role: 'operator' as const }];
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0, ApiKeys: keys });
    await t.server.start();
    expect(await warmUp(t.server, keys, 1)).toMatchObject({ requests: 5, answers: { 200: 1, 403: 4 }, error: null });
  });

  it("each POST's body is refused at its last field, so that the rest of it runs its validation", async () => {
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0 });
    await t.server.start();
    const posts = ASKED.filter((a) => a.method === 'POST');
    expect(posts.map((p) => p.path)).toEqual(['/sortation', '/destination']);
    const refused = await Promise.all(
      posts.map(async ({ path, body }) => {
        const res = await fetch(`http://127.0.0.1:${t.server.info.port as number}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        return [res.status, ((await res.json()) as { message: string }).message];
      }),
    );
    expect(refused).toEqual([
      [400, '"Type" must be a string'],
      [400, '"DestinationText" must be a string'],
    ]);
  });

  it('a server that does not listen: says why, does not throw', async () => {
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0 });
    await t.server.start();
    await t.server.stop();
    const done = await warmUp(t.server, [], 3);
    expect(done.requests).toBe(0);
    expect(done.error).toMatch(/ECONNREFUSED/);
  });
});
