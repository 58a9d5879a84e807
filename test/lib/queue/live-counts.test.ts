// The live figures of the queues and the outbox (lib/queue/live-counts.ts), on a real SQLite
// file: a short table counted in one statement, a long one a slice at a time with the event loop
// free between slices, rows and claims that change while a count goes on counted as they stood in
// their own slice, and callers that ask meanwhile sharing the count under way.
import { createQueueStore } from '../../../db/queue-store';
import { outboxReads } from '../../../db/outbox-store';
import type { TableCount } from '../../../db/table-count';
import { countInSlices, liveCounts } from '../../../lib/queue/live-counts';
import { freshDbEach } from '../../helpers/db';
import { induct } from '../../helpers/messages';

const AT = '2026-11-21T10:00:00.000Z';

/** `table`, with the slices it was asked for counted. */
function counted(table: TableCount) {
  const asked = { slices: 0, whole: 0 };
  return {
    asked,
    table: {
      span: () => table.span(),
      whole: (ids: string) => (asked.whole++, table.whole(ids)),
      slice: (ids: string, from: number, limit: number) => (asked.slices++, table.slice(ids, from, limit)),
    } as TableCount,
  };
}

describe('live counts', () => {
  const ctx = freshDbEach();
  const fill = (n: number) => {
    const store = createQueueStore(ctx.db);
    store.enqueue(
      Array.from({ length: n }, (_, i) => induct(String(i).padStart(6, '0'))),
      AT,
    );
    return store;
  };

  it('counts a table whose ids span no more than a slice whole, in one statement, without giving the event loop back', async () => {
    const store = fill(500);
    const { table, asked } = counted(store.tally('sortation'));
    let yields = 0;
    const result = await countInSlices(
      table,
      () => [3, 4, 9999],
      500,
      async () => void yields++,
    );
    expect(result).toEqual({ rows: 500, among: 2 });
    expect(asked).toEqual({ slices: 0, whole: 1 });
    expect(yields).toBe(0);
  });

  it('counts a longer table a slice at a time, giving the event loop back between slices', async () => {
    const store = fill(3000);
    const { table, asked } = counted(store.tally('sortation'));
    const turns: string[] = [];
    const result = await countInSlices(
      table,
      () => [10, 2990],
      500,
      async () => {
        turns.push('yield');
        await new Promise<void>((r) => setImmediate(r));
      },
    );
    expect(result).toEqual({ rows: 3000, among: 2 });
    // 6 full slices and the empty one that ends the walk, a turn given back after each full one.
    expect(asked).toEqual({ slices: 7, whole: 0 });
    expect(turns).toHaveLength(6);
  });

  it('counts rows and claims that change during the count as each stood in its own slice', async () => {
    const store = fill(3000);
    const claims = new Set([10, 1600]);
    let first = true;
    const result = await countInSlices(
      store.tally('sortation'),
      () => claims,
      500,
      async () => {
        if (!first) return;
        first = false;
        // After the first slice (ids 1 to 500) was counted: rows removed from it and from a slice
        // not read yet, a claim's removal committed while its claim is still held, new rows at the end.
        ctx.db.prepare('DELETE FROM sortation_queue WHERE id BETWEEN 1 AND 100 OR id BETWEEN 2000 AND 2099 OR id = 1600').run();
        store.enqueue(
          Array.from({ length: 50 }, (_, i) => induct(`N${i}`)),
          AT,
        );
      },
    );
    // The first slice as it was (500, claim 10 among them); the rest as it is now.
    expect(result).toEqual({ rows: 500 + (2500 - 100 - 1) + 50, among: 1 });
    expect(store.depth('sortation')).toBe(3000 - 100 - 100 - 1 + 50);
  });

  it('lets a caller that asks during a count share it, and splits the queue by its claims', async () => {
    const store = fill(3000);
    const { table, asked } = counted(store.tally('sortation'));
    const outbox = outboxReads(ctx.db);
    const claimedIds = new Set([1, 2, 3]);
    const live = liveCounts(
      {
        store: { tally: () => table },
        outbox,
        dispatchers: { sortation: { claimedIds }, destination: { claimedIds: [] } },
      },
      1000,
    );
    const [a, b] = await Promise.all([live.queue('sortation'), live.queue('sortation')]);
    expect(a).toEqual({ waiting: 2997, handedOut: 3 });
    expect(b).toEqual(a);
    expect(asked.slices).toBe(4); // one walk: 3 full slices and the empty end
    // Once it has ended, the next caller counts again.
    claimedIds.delete(3);
    expect(await live.queue('sortation')).toEqual({ waiting: 2998, handedOut: 2 });
    expect(asked.slices).toBe(8);
    expect(await live.outbox()).toBe(0);
  });
});
