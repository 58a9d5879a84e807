// The service's outbound policy on the link: order, numbering by outbox id, time to live.
import { createOutboxStore } from '../../../db/outbox-store';
import { OutboxFeed, seqOfOutboxId } from '../../../lib/link/outbox-feed';
import { createLogger } from '../../../lib/process/logger';
import { freshDb } from '../../helpers/db';

describe('OutboxFeed', () => {
  it('numbers outbox rows 1..999999 and wraps', () => {
    expect(seqOfOutboxId(1)).toBe(1);
    expect(seqOfOutboxId(999999)).toBe(999999);
    expect(seqOfOutboxId(1000000)).toBe(1);
  });

  function feed(now: { ms: number }) {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const dropped: Array<[number, string]> = [];
    const f = new OutboxFeed({
      outbox: { ...outbox, remove: async (id) => outbox.remove(id) },
      drop: async (entry, reason) => void dropped.push([entry.id, reason]),
      assignmentTtlSeconds: 10,
      maxOffered: 8,
      log: createLogger('silent'),
      clock: () => new Date(now.ms),
    });
    const add = (track: string, at: number) => {
      const createdAt = new Date(at).toISOString();
      const message = { kind: 'ASSIGNMENT' as const, body: { TrackID: track, Destination: 'D1', Barcode: '' } };
      return { id: outbox.add(message, null, createdAt), message, createdAt };
    };
    return { ctx, outbox, f, add, dropped };
  }

  it('restarts at the oldest entry, sends in order within the limit, and says when the backlog is out', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add } = feed(now);
    const [a, b, c] = ['A', 'B', 'C'].map((t) => add(t, now.ms));
    expect(f.restart()).toBe(seqOfOutboxId(a.id));
    expect(f.next(2, false).map((o) => [o.seq, o.type])).toEqual([[seqOfOutboxId(a.id), 'ASGN'], [seqOfOutboxId(b.id), 'ASGN']]);
    expect(f.backlogSent()).toBe(false);
    expect(f.next(2, false).map((o) => o.ref.id)).toEqual([c.id]);
    expect(f.backlogSent()).toBe(true);
    // Offered after its commit: sent from memory, in order.
    const d = add('D', now.ms);
    f.offer(d, true);
    expect(f.next(2, false).map((o) => o.ref.id)).toEqual([d.id]);
    expect(f.next(2, false)).toEqual([]);
    ctx.dispose();
  });

  it('finds rows nobody offered only on the thorough look', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add } = feed(now);
    f.restart();
    const e = add('UNOFFERED', now.ms);
    expect(f.next(4, false)).toEqual([]);
    expect(f.next(4, true).map((o) => o.ref.id)).toEqual([e.id]);
    ctx.dispose();
  });

  it('drops an assignment past its time to live, when first sent and when about to be resent', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add, dropped } = feed(now);
    const old = add('OLD', now.ms - 11_000);
    const fresh = add('FRESH', now.ms);
    f.restart();
    expect(f.next(4, false).map((o) => o.ref.id)).toEqual([fresh.id]);
    expect(dropped).toEqual([[old.id, 'older than AssignmentTtlSeconds (11 s)']]);
    expect(f.stillWanted(fresh)).toBe(true);
    now.ms += 10_500;
    expect(f.stillWanted(fresh)).toBe(false);
    ctx.dispose();
  });
});
