// The queue dispatcher: FIFO waiters, claims, timeouts, release and retried removal.
import { type DeadLetterInfo, deadLetterReads, deadLetterWrites } from '../../../db/dead-letter-store';
import { createQueueStore, type QueueStore } from '../../../db/queue-store';
import { QueueDispatcher } from '../../../lib/queue/dispatcher';
import type { VerifyDto } from '../../../model/messages';
import { freshDb } from '../../helpers/db';
import { atLeast } from '../../helpers/nth';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });
const delivered = { deliveredAt: '2026-11-21T00:00:00.000Z', clientAddress: null };
const trackOf = (c: { stored: { message: unknown } } | null) => (c ? (c.stored.message as VerifyDto).TrackID : null);

describe('QueueDispatcher', () => {
  let ctx: ReturnType<typeof freshDb>;
  let store: QueueStore;
  let d: QueueDispatcher<'sortation'>;
  beforeEach(() => {
    ctx = freshDb();
    store = createQueueStore(ctx.db);
    d = new QueueDispatcher('sortation', store);
  });
  afterEach(() => {
    d.close();
    ctx.dispose();
  });

  it('answers an immediate check at once: a message, or null when empty', async () => {
    expect(await d.take(0)).toBeNull();
    store.enqueue([verify('a')], 'T');
    expect(trackOf(await d.take(0))).toBe('a');
  });

  it('hides a claimed message from others until it is released, then it is the head again', async () => {
    store.enqueue([verify('a'), verify('b')], 'T');
    const first = await d.take(0);
    const second = await d.take(0);
    expect([trackOf(first), trackOf(second)]).toEqual(['a', 'b']);
    first!.release();
    expect(trackOf(await d.take(0))).toBe('a');
  });

  it('removes a committed message for good', async () => {
    store.enqueue([verify('a')], 'T');
    const claim = await d.take(0);
    expect(await claim!.commit(delivered)).toBe(true);
    expect(await claim!.commit(delivered)).toBe(false);
    expect(store.depth('sortation')).toBe(0);
    expect(await d.take(0)).toBeNull();
  });

  it('serves waiters first come, first served when messages arrive', async () => {
    const waits = [d.take(5000), d.take(5000), d.take(5000)] as const;
    expect(d.waiting).toBe(3);
    store.enqueue([verify('1'), verify('2')], 'T');
    d.notify();
    expect(trackOf(await waits[0])).toBe('1');
    expect(trackOf(await waits[1])).toBe('2');
    expect(d.waiting).toBe(1);
    store.enqueue([verify('3')], 'T');
    d.notify();
    expect(trackOf(await waits[2])).toBe('3');
  });

  it('does not let a newcomer overtake a waiter', async () => {
    const waiting = d.take(5000);
    store.enqueue([verify('a')], 'T');
    // Not notified yet: an immediate check must not take what the waiter is owed.
    expect(await d.take(0)).toBeNull();
    d.notify();
    expect(trackOf(await waiting)).toBe('a');
  });

  it('gives a released message to the next waiter', async () => {
    store.enqueue([verify('a')], 'T');
    const claim = await d.take(0);
    const waiting = d.take(5000);
    claim!.release();
    expect(trackOf(await waiting)).toBe('a');
  });

  it('counts a message released after it may have been read as a possible duplicate, and records its attempt', async () => {
    store.enqueue([verify('a'), verify('b')], 'T');
    const first = await d.take(0);
    expect(first!.attempt).toBe(1);
    first!.written();
    first!.release(true);
    const again = await d.take(0);
    expect([trackOf(again), again!.attempt]).toEqual(['a', 2]);
    expect(d.redelivered).toBe(0); // counted once its response is written
    again!.written();
    expect(d.redelivered).toBe(1);
    await again!.commit(delivered);
    expect(ctx.db.prepare('SELECT track_id, attempt FROM delivered_history').all()).toEqual([{ track_id: 'a', attempt: 2 }]);
    // Released when proven unread: not a duplicate, the next delivery is still the first.
    const b = await d.take(0);
    b!.written();
    b!.release(false);
    expect((await d.take(0))!.attempt).toBe(1);
    expect(d.redelivered).toBe(1);
  });

  it('times out with null after the wait', async () => {
    const started = Date.now();
    expect(await d.take(120)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(d.waiting).toBe(0);
  });

  it('drops an aborted waiter without costing a message', async () => {
    let leave: () => void = () => {};
    const gone = d.take(5000, (onGone) => ((leave = onGone), () => {}));
    const stays = d.take(5000);
    leave();
    expect(await gone).toBeNull();
    store.enqueue([verify('a')], 'T');
    d.notify();
    expect(trackOf(await stays)).toBe('a');
  });

  it('answers every waiter with null at close and refuses new ones', async () => {
    const waits = [d.take(5000), d.take(5000)];
    d.close();
    expect(await Promise.all(waits)).toEqual([null, null]);
    store.enqueue([verify('a')], 'T');
    expect(await d.take(0)).toBeNull();
  });

  it('keeps a message whose removal fails claimed, and tries again until it is removed', async () => {
    const errors: unknown[] = [];
    let failures = 2;
    const flaky = {
      ...store,
      deliver: (m: Parameters<typeof store.deliver>[0], dl: Parameters<typeof store.deliver>[1]) =>
        failures-- > 0 ? Promise.reject(new Error('disk I/O error')) : Promise.resolve(store.deliver(m, dl)),
    };
    const retrying = new QueueDispatcher('sortation', flaky, { onStoreError: (err) => errors.push(err), retryMs: 5 });
    store.enqueue([verify('a'), verify('b')], 'T');
    const claim = await retrying.take(0);
    const committing = claim!.commit(delivered);
    // Meanwhile nobody else gets it: the client has it already.
    expect(trackOf(await retrying.take(0))).toBe('b');
    expect(await committing).toBe(true);
    expect(errors).toHaveLength(2);
    expect(retrying.inFlight).toBe(1); // b
    expect(ctx.db.prepare('SELECT track_id FROM delivered_history').pluck().all()).toEqual(['a']);
  });

  it('gives up the retries at close: the row stays, to be delivered again after the restart', async () => {
    const failing = new QueueDispatcher(
      'sortation',
      { ...store, deliver: () => Promise.reject(new Error('readonly database')) },
      { retryMs: 5 },
    );
    store.enqueue([verify('a')], 'T');
    const claim = await failing.take(0);
    const committing = claim!.commit(delivered);
    await new Promise((r) => setTimeout(r, 20));
    failing.close();
    expect(await committing).toBe(false);
    expect(store.depth('sortation')).toBe(1);
    expect(failing.inFlight).toBe(0);
  });

  it('counts a message whose removal is committed but not yet reported back neither as waiting nor as handed out', async () => {
    // In the service the removal commits on the writer thread, and the main thread hears of it a
    // moment later: /status and /metrics read the table in between (this once read -1).
    let report!: () => void;
    const reported = new Promise<void>((r) => (report = r));
    const slow = new QueueDispatcher('sortation', {
      ...store,
      deliver: async (s, dl) => {
        const removed = store.deliver(s, dl);
        await reported;
        return removed;
      },
    });
    store.enqueue([verify('a'), verify('b')], 'T');
    const a = await slow.take(0);
    expect(store.counts('sortation', slow.claimedIds)).toEqual({ waiting: 1, handedOut: 1 });
    const committing = a!.commit(delivered);
    await new Promise((r) => setImmediate(r));
    expect(store.depth('sortation')).toBe(1); // a is gone from the table, still claimed in memory
    expect(slow.inFlight).toBe(1);
    expect(store.counts('sortation', slow.claimedIds)).toEqual({ waiting: 1, handedOut: 0 });
    report();
    expect(await committing).toBe(true);
    expect(store.counts('sortation', slow.claimedIds)).toEqual({ waiting: 1, handedOut: 0 });
    const b = await slow.take(0);
    expect(store.counts('sortation', slow.claimedIds)).toEqual({ waiting: 0, handedOut: 1 });
    b!.release();
    slow.close();
  });

  it('a successful removal does not query the queue again for waiters', async () => {
    let heads = 0;
    const counting = new QueueDispatcher('sortation', { ...store, head: (q, skip) => (heads++, store.head(q, skip)) });
    store.enqueue([verify('a')], 'T');
    const claim = await counting.take(0);
    const waiting = counting.take(5000);
    const before = heads;
    expect(await claim!.commit(delivered)).toBe(true);
    expect(heads).toBe(before);
    counting.close();
    expect(await waiting).toBeNull();
  });

  describe('MaxDeliveries', () => {
    const from = { clientAddress: '10.0.0.9', reason: 'NoProof' };
    /** Take the head and give it back unproven, as a client that never proves its reads. */
    const unproven = async (x: QueueDispatcher<'sortation'>) => {
      const c = await x.take(0);
      c!.written();
      c!.release(true, from);
      return c!;
    };
    let dead: DeadLetterInfo[];
    let limited: QueueDispatcher<'sortation'>;
    beforeEach(() => {
      dead = [];
      limited = new QueueDispatcher(
        'sortation',
        { ...store, ...deadLetterWrites(ctx.db) },
        { maxDeliveries: 3, onDeadLetter: (_s, info) => dead.push(info), clock: () => new Date('2026-11-25T12:00:00.000Z') },
      );
    });
    afterEach(() => limited.close());

    it('the third unproven delivery moves the message to the dead letters, and the queue moves on', async () => {
      store.enqueue([verify('a'), verify('b')], 'T');
      expect([(await unproven(limited)).attempt, (await unproven(limited)).attempt]).toEqual([1, 2]);
      expect(dead).toEqual([]);
      expect((await unproven(limited)).attempt).toBe(3);
      await new Promise((r) => setImmediate(r));
      expect(dead).toEqual([{ attempts: 3, clientAddress: '10.0.0.9', lastReturn: 'NoProof', deadAt: '2026-11-25T12:00:00.000Z' }]);
      expect(limited.deadLettered).toBe(1);
      expect(trackOf(await limited.take(0))).toBe('b');
      expect(deadLetterReads(ctx.db).listDeadLetters(10)).toMatchObject([
        { TrackID: 'a', Attempts: 3, LastClient: '10.0.0.9', LastReturn: 'NoProof' },
      ]);
    });

    it('releases proven unread (a client gone before the response) do not count', async () => {
      store.enqueue([verify('a')], 'T');
      for (let i = 0; i < 5; i++) (await limited.take(0))!.release(false, { clientAddress: null, reason: 'ClosedUnread' });
      expect(dead).toEqual([]);
      expect((await limited.take(0))!.attempt).toBe(1);
    });

    it('the message stays invisible until its move is committed', async () => {
      let commit!: () => void;
      const slow = new QueueDispatcher(
        'sortation',
        {
          ...store,
          deadLetter: async (s, i) => {
            await new Promise<void>((r) => (commit = r));
            return deadLetterWrites(ctx.db).deadLetter(s, i);
          },
        },
        { maxDeliveries: 1 },
      );
      store.enqueue([verify('a')], 'T');
      await unproven(slow);
      expect(await slow.take(0)).toBeNull();
      commit();
      await new Promise((r) => setImmediate(r));
      expect(slow.inFlight).toBe(0);
      expect(store.depth('sortation')).toBe(0);
      slow.close();
    });

    it('a move the storage refuses leaves the message queued; the next unproven delivery tries again', async () => {
      const errors: unknown[] = [];
      let refuse = true;
      const flaky = new QueueDispatcher(
        'sortation',
        { ...store, deadLetter: (s, i) => (refuse ? Promise.reject(new Error('disk full')) : deadLetterWrites(ctx.db).deadLetter(s, i)) },
        { maxDeliveries: 1, onStoreError: (e) => errors.push(e) },
      );
      store.enqueue([verify('a')], 'T');
      await unproven(flaky);
      await new Promise((r) => setImmediate(r));
      expect(errors).toHaveLength(1);
      const again = await flaky.take(0);
      expect([trackOf(again), again!.attempt]).toEqual(['a', 2]);
      refuse = false;
      again!.written();
      again!.release(true, from);
      await new Promise((r) => setImmediate(r));
      expect(store.depth('sortation')).toBe(0);
      flaky.close();
    });

    it('sent back by an operator: the attempts go on (a possible duplicate), MaxDeliveries counts anew', async () => {
      store.enqueue([verify('a')], 'T');
      for (let i = 0; i < 3; i++) await unproven(limited);
      await new Promise((r) => setImmediate(r));
      const [back] = atLeast(1, deadLetterWrites(ctx.db).requeueDeadLetters(null));
      limited.requeued(back.messageId, back.attempts);
      expect((await unproven(limited)).attempt).toBe(4);
      expect((await unproven(limited)).attempt).toBe(5);
      expect(dead).toHaveLength(1);
      expect((await unproven(limited)).attempt).toBe(6);
      await new Promise((r) => setImmediate(r));
      expect(dead.map((d) => d.attempts)).toEqual([3, 6]);
    });

    it('0 means never', async () => {
      const unlimited = new QueueDispatcher('sortation', { ...store, ...deadLetterWrites(ctx.db) }, { maxDeliveries: 0 });
      store.enqueue([verify('a')], 'T');
      for (let i = 0; i < 50; i++) await unproven(unlimited);
      expect((await unlimited.take(0))!.attempt).toBe(51);
      unlimited.close();
    });
  });
});
