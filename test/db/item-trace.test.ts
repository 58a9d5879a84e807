// "What happened to item X": the timeline from the delivery history, the queue and the outbox
// history (kept by the triggers of migration 006), through GET /items/{TrackID}.
import { itemTrace } from '../../db/item-trace';
import { SLICE_ROWS } from '../../db/table-count';
import { createQueueStore } from '../../db/queue-store';
import type { InductDto, VerifyDto } from '../../model/messages';
import { freshDbEach } from '../helpers/db';
import { type TestService, testService } from '../helpers/service';
import { atLeast } from '../helpers/nth';

const request = (rc: number): InductDto => ({
  Type: 'REQUEST',
  TrackID: '0004711',
  Barcode: 'B1',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: rc,
  Length: 1,
  Width: 1,
  Height: 1,
  Weight: 1,
});
const later = () => new Promise((r) => setTimeout(r, 5)); // each step in a millisecond of its own
const events = async (t: TestService, id = '0004711') => {
  const res = await t.server.inject(`/items/${id}`);
  return { status: res.statusCode, body: JSON.parse(res.payload) };
};

describe('item trace', () => {
  let t: TestService;
  // Live mode with no sorter reachable: assignments stay in the outbox until the test settles them.
  beforeEach(async () => (t = await testService({ TestMode: false, Sorter: { Port: 1, ReconnectMaxMs: 200 } })));
  afterEach(() => t.close());

  it('tells each REQUEST with its recirculation and who got it, each assignment and its fate, the VERIFY', async () => {
    await t.publish([request(0)]);
    await later();
    await t.server.inject('/sortation?timeOut=0'); // handed out (and proven: injected)
    await t.settled();
    await later();
    const posted = JSON.parse(
      (await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D7' } })).payload,
    );
    await later();
    await t.service.writer.run('removeFromOutbox', [posted.OutboxID]); // the sorter acknowledged it
    await later();
    await t.publish([request(1)]); // the item went round again: still waiting
    await later();
    const late = JSON.parse(
      (await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D8' } })).payload,
    );
    await later();
    const [entry] = atLeast(1, t.service.deps.outbox.peek(1));
    await t.service.writer.run('dropFromOutbox', [entry, 'older than Sorter.AssignmentTtlSeconds (30 s)', new Date().toISOString()]);
    await later();
    expect(entry.id).toBe(late.OutboxID);
    await t.publish([{ Type: 'VERIFY', TrackID: '0004711', Barcode: 'B1', Destination: 'D7', MessageCode: 212 }]);

    const { status, body } = await events(t);
    expect(status).toBe(200);
    expect(body.TrackID).toBe('0004711');
    expect(body.Events.map((e: { Event: string }) => e.Event)).toEqual([
      'RequestReceived',
      'RequestDelivered',
      'AssignmentPosted',
      'AssignmentAcknowledged',
      'RequestReceived',
      'RequestWaiting',
      'AssignmentPosted',
      'AssignmentDropped',
      'VerifyReceived',
      'VerifyWaiting',
    ]);
    const byEvent = (name: string) => body.Events.filter((e: { Event: string }) => e.Event === name);
    expect(byEvent('RequestReceived').map((e: { RecirculationCount: number }) => e.RecirculationCount)).toEqual([0, 1]);
    expect(byEvent('RequestDelivered')[0]).toMatchObject({ Client: '127.0.0.1', Attempt: 1, ReadProof: 'Injected' });
    expect(byEvent('AssignmentAcknowledged')[0]).toMatchObject({ Destination: 'D7' });
    expect(byEvent('AssignmentDropped')[0]).toMatchObject({ Destination: 'D8', Reason: 'older than Sorter.AssignmentTtlSeconds (30 s)' });
    expect(byEvent('VerifyWaiting')).toHaveLength(1);
    // Oldest first.
    const times = body.Events.map((e: { Time: string }) => e.Time);
    expect([...times].sort()).toEqual(times);
  });

  it('404 naming the item when nothing is known of it', async () => {
    const { status, body } = await events(t, 'NEVERSEEN');
    expect(status).toBe(404);
    expect(body.message).toMatch(/nothing is known of item "NEVERSEEN"/);
  });

  it('the outbox history: a row when the entry is settled, by a trigger in the same transaction; waiting, the entry is in the outbox and the trace says so', async () => {
    const posted = JSON.parse(
      (await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: 'X1', Destination: 'D1' } })).payload,
    );
    const fate = () => t.service.db.prepare('SELECT fate FROM outbox_history WHERE outbox_id = ?').get(posted.OutboxID);
    expect(fate()).toBeUndefined();
    expect((await events(t, 'X1')).body.Events.map((e: { Event: string }) => e.Event)).toEqual(['AssignmentPosted', 'AssignmentQueued']);
    await t.service.writer.run('removeFromOutbox', [posted.OutboxID]);
    expect(fate()).toEqual({ fate: 'Acknowledged' });
    expect((await events(t, 'X1')).body.Events.map((e: { Event: string }) => e.Event)).toEqual([
      'AssignmentPosted',
      'AssignmentAcknowledged',
    ]);
  });

  it('tells a REQUEST moved to the dead letters, with its attempts and last client, and that it waits again once sent back', async () => {
    await t.publish([request(0)]);
    await later();
    const stored = t.service.deps.store.head('sortation', [])!;
    await t.service.writer.run('deadLetter', [
      stored,
      { attempts: 10, clientAddress: '10.0.0.9', lastReturn: 'NoProof', deadAt: new Date().toISOString() },
    ]);
    const dead = (await events(t)).body.Events;
    expect(dead.map((e: { Event: string }) => e.Event)).toEqual(['RequestReceived', 'RequestDeadLettered']);
    expect(dead[1]).toMatchObject({
      Attempt: 10,
      Client: '10.0.0.9',
      Text: 'REQUEST moved to the dead letters: handed out 10 times without proof of the read, last to 10.0.0.9',
    });
    await t.server.inject({ method: 'POST', url: '/dead-letters/requeue', payload: { All: true } });
    expect((await events(t)).body.Events.map((e: { Event: string }) => e.Event)).toEqual(['RequestReceived', 'RequestWaiting']);
  });
});

describe('item trace on a long queue', () => {
  const ctx = freshDbEach();
  const verify = (trackId: string): VerifyDto => ({ Type: 'VERIFY', TrackID: trackId, Barcode: 'B', Destination: 'D3', MessageCode: 212 });

  it('finds an item among more queued rows than a slice, a slice at a time, stepping over a gap in the ids', async () => {
    const store = createQueueStore(ctx.db);
    const at = '2026-11-21T10:00:00.000Z';
    store.enqueue(
      Array.from({ length: SLICE_ROWS * 2 + 500 }, (_, i) => verify(`P${i}`)),
      at,
    );
    // An operator's row far above the rest, and the item's VERIFY last of all.
    ctx.db.prepare('UPDATE sortation_queue SET id = 1000000000000 WHERE id = (SELECT max(id) FROM sortation_queue)').run();
    store.enqueue([verify('0004711')], '2026-11-21T10:00:01.000Z');
    let turns = 0;
    const trace = itemTrace(ctx.db, async () => {
      turns++;
      await new Promise<void>((r) => setImmediate(r));
    });
    expect(await trace('0004711')).toEqual({
      TrackID: '0004711',
      Events: [
        expect.objectContaining({ Time: '2026-11-21T10:00:01.000Z', Event: 'VerifyReceived', Destination: 'D3' }),
        expect.objectContaining({ Time: '2026-11-21T10:00:01.000Z', Event: 'VerifyWaiting' }),
      ],
    });
    // Three slices of the first 20,500 ids, then the row at 10^12 and the item's above it.
    expect(turns).toBe(3);
    expect((await trace('P7'))?.Events.map((e) => e.Event)).toEqual(['VerifyReceived', 'VerifyWaiting']);
    expect(await trace('nobody')).toBeNull();
  });
});
