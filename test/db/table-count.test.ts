// Counting a queue table or the outbox whole and a slice at a time, on a real SQLite file: the
// slices cover every row once, the ids asked about are counted within each slice's bounds, and
// the span bounds the rows from above.
import { createQueueStore } from '../../db/queue-store';
import { outboxReads } from '../../db/outbox-store';
import { type TableCount, tableCount } from '../../db/table-count';
import { freshDbEach } from '../helpers/db';
import { induct } from '../helpers/messages';

const AT = '2026-11-21T10:00:00.000Z';

/** Walk `table` a slice of `limit` rows at a time; each slice's figures. */
function walk(table: TableCount, ids: number[], limit: number) {
  const slices: Array<{ rows: number; among: number; last: number | null }> = [];
  let from = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const s = table.slice(JSON.stringify(ids), from, limit);
    slices.push(s);
    if (s.rows < limit || s.last === null) return slices;
    from = s.last + 1;
  }
}

describe('table count', () => {
  const ctx = freshDbEach();

  it('spans nothing in an empty table, and counts nothing whole or in slices', () => {
    const table = tableCount(ctx.db, 'sortation_queue');
    expect(table.span()).toBe(0);
    expect(table.whole('[1]')).toEqual({ rows: 0, among: 0 });
    expect(table.slice('[1]', 0, 10)).toEqual({ rows: 0, among: 0, last: null });
  });

  it('covers every row once in slices, with the ids asked about counted where they are', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue(
      Array.from({ length: 2500 }, (_, i) => induct(String(i).padStart(6, '0'))),
      AT,
    );
    // Gaps: every seventh row gone, and the first ten; an id asked about may be gone too.
    ctx.db.prepare('DELETE FROM sortation_queue WHERE id % 7 = 0 OR id <= 10').run();
    const ids = [5, 11, 14, 600, 601, 2500, 9999];
    const table = tableCount(ctx.db, 'sortation_queue');
    const whole = table.whole(JSON.stringify(ids));
    expect(whole).toEqual({ rows: 2500 - 10 - (Math.floor(2500 / 7) - 1), among: 4 }); // 11, 600, 601, 2500
    expect(table.span()).toBe(2500 - 11 + 1);
    expect(table.span()).toBeGreaterThanOrEqual(whole.rows);

    const slices = walk(table, ids, 300);
    expect(slices.every((s) => s.rows <= 300)).toBe(true);
    const lasts = slices.flatMap((s) => (s.last === null ? [] : [s.last]));
    expect(lasts).toEqual([...lasts].sort((a, b) => a - b));
    expect(slices.reduce((n, s) => n + s.rows, 0)).toBe(whole.rows);
    expect(slices.reduce((n, s) => n + s.among, 0)).toBe(whole.among);
    // A slice exactly as long as the limit is followed by one more, which may be empty.
    expect(walk(table, ids, whole.rows).map((s) => s.rows)).toEqual([whole.rows, 0]);
  });

  it('counts the outbox the same way', async () => {
    const reads = outboxReads(ctx.db);
    expect(reads.depth()).toBe(0);
    const insert = ctx.db.prepare(
      "INSERT INTO outbox (id, kind, track_id, barcode, destination, created_at) VALUES (?, 'ASSIGNMENT', ?, 'B', 'D1', ?)",
    );
    for (let i = 1; i <= 40; i++) insert.run(i * 3, `T${i}`, AT);
    expect(reads.depth()).toBe(40);
    expect(reads.tally.span()).toBe(118);
    expect(walk(reads.tally, [], 15).map((s) => s.rows)).toEqual([15, 15, 10]);
  });
});
