import { createQueueStore } from '../../db/queue-store';
import { Committer } from '../../lib/committer';
import type { VerifyDto } from '../../lib/messages';
import { freshDb } from '../helpers/db';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });

describe('Committer (group commit)', () => {
  it('commits the writes of one event-loop turn in one transaction, resolving each only after the commit', async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const committer = new Committer(ctx.db);
    let committedWhenResolved = -1;
    const first = committer.run(() => store.enqueue([verify('a')], 'T')).then((ids) => {
      committedWhenResolved = ctx.db.prepare('SELECT count(*) FROM sortation_queue').pluck().get() as number;
      return ids;
    });
    const rest = Array.from({ length: 9 }, (_, i) => committer.run(() => store.enqueue([verify(String(i))], 'T')));
    expect(store.depth('sortation')).toBe(0); // nothing written before the turn ends
    const ids = await Promise.all([first, ...rest]);
    expect(ids.flat()).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(committedWhenResolved).toBe(10);
    expect(committer.stats).toEqual({ Commits: 1, Writes: 10 });
    ctx.dispose();
  });

  it('a failing write fails alone: the others of its batch are committed', async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const committer = new Committer(ctx.db);
    const good = committer.run(() => store.enqueue([verify('ok')], 'T'));
    const bad = committer.run(() => store.enqueue([{ ...verify('x'), Type: 'BOGUS' } as unknown as VerifyDto], 'T'));
    const alsoGood = committer.run(() => store.enqueue([verify('ok2')], 'T'));
    // (Checked by message: SqliteError comes from another realm than jest's Error.)
    expect(await bad.then(() => 'resolved', (err) => String(err))).toMatch(/CHECK constraint failed/);
    expect((await good).length + (await alsoGood).length).toBe(2);
    expect(store.depth('sortation')).toBe(2);
    ctx.dispose();
  });

  it('flushIfIdle commits at once while the event loop is idle, and leaves batching to the scheduled commit while it is busy', async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const committer = new Committer(ctx.db);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await sleep(250); // at least two utilisation samples of an idle loop
    const idle = committer.run(() => store.enqueue([verify('idle')], 'T'));
    committer.flushIfIdle();
    expect(store.depth('sortation')).toBe(1); // committed synchronously
    await idle;

    // Keep the loop busy for a few samples, then ask again: the write waits for its batch.
    for (let i = 0; i < 4; i++) {
      await sleep(0);
      const until = performance.now() + 90;
      while (performance.now() < until); // spin: utilisation near 1
    }
    await sleep(0); // let the sampler (if its turn came) run
    const until = performance.now() + 120;
    while (performance.now() < until);
    await new Promise((r) => setImmediate(r));
    const busy = committer.run(() => store.enqueue([verify('busy')], 'T'));
    committer.flushIfIdle();
    expect(store.depth('sortation')).toBe(1); // not yet: waits for the group commit
    await busy;
    expect(store.depth('sortation')).toBe(2);
    committer.close();
    ctx.dispose();
  });

  it('without group commit, each write is its own transaction', async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const committer = new Committer(ctx.db, false);
    await Promise.all([committer.run(() => store.enqueue([verify('a')], 'T')), committer.run(() => store.enqueue([verify('b')], 'T'))]);
    expect(committer.stats).toEqual({ Commits: 2, Writes: 2 });
    ctx.dispose();
  });
});
