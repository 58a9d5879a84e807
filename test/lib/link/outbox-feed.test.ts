// The service's outbound policy on the link: order, numbering by outbox id, time to live.
import { createOutboxStore } from '../../../db/outbox-store';
import { OutboxFeed, seqOfOutboxId } from '../../../lib/link/outbox-feed';
import type { InboundMessage } from '../../../lib/link/session-port';
import { sorterMessageData } from '../../../bench/v1-codec';
import { createLogger } from '../../../lib/process/logger';
import { freshDb } from '../../helpers/db';
import { atLeast } from '../../helpers/nth';

describe('OutboxFeed', () => {
  it('numbers outbox rows 1..999999 and wraps', () => {
    expect(seqOfOutboxId(1)).toBe(1);
    expect(seqOfOutboxId(999999)).toBe(999999);
    expect(seqOfOutboxId(1000000)).toBe(1);
  });

  /** `ms` is the time that passes (the clock that never steps); the wall clock is `stepMs` (a step of the system clock) off it. */
  function feed(now: { ms: number; stepMs?: number }) {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const dropped: Array<[number, string]> = [];
    const received: Array<[string, InboundMessage]> = [];
    const peerSessions: Array<[string, number]> = [];
    const f = new OutboxFeed({
      outbox: { ...outbox, removeFromOutbox: async (id) => outbox.removeFromOutbox(id) },
      dropFromOutbox: async (entry, reason) => void dropped.push([entry.id, reason]),
      epoch: 'E1',
      receive: async (type, event) => void received.push([type, event]),
      setPeerSession: async (epoch, lastSeqIn) => void peerSessions.push([epoch, lastSeqIn]),
      assignmentTtlSeconds: 10,
      maxOffered: 8,
      log: createLogger('silent'),
      clock: () => new Date(now.ms + (now.stepMs ?? 0)),
      monotonicMs: () => now.ms,
    });
    const add = (track: string, at: number) => {
      const createdAt = new Date(at).toISOString();
      const message = { kind: 'ASSIGNMENT' as const, body: { TrackID: track, Destination: 'D1', Barcode: '' } };
      return { id: outbox.addToOutbox(message, null, createdAt), message, createdAt };
    };
    return { ctx, outbox, f, add, dropped, received, peerSessions };
  }

  it('restarts at the oldest entry, sends in order within the limit, and says when the backlog is out', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add } = feed(now);
    const [a, b, c] = atLeast(
      3,
      ['A', 'B', 'C'].map((t) => add(t, now.ms)),
    );
    expect(f.restart()).toEqual({ epoch: 'E1', nextSeq: seqOfOutboxId(a.id) });
    expect(f.nextOutbound(2, false).map((o) => [o.seq, o.type])).toEqual([
      [seqOfOutboxId(a.id), 'ASGN'],
      [seqOfOutboxId(b.id), 'ASGN'],
    ]);
    expect(f.backlogSent()).toBe(false);
    expect(f.nextOutbound(2, false).map((o) => o.ref.id)).toEqual([c.id]);
    expect(f.backlogSent()).toBe(true);
    // Offered after its commit: sent from memory, in order.
    const d = add('D', now.ms);
    f.offer(d, true);
    expect(f.nextOutbound(2, false).map((o) => o.ref.id)).toEqual([d.id]);
    expect(f.nextOutbound(2, false)).toEqual([]);
    ctx.dispose();
  });

  it('sends an offered entry with the telegram it was offered with, encoded once before its commit; one read back is encoded then', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add } = feed(now);
    f.restart();
    const d = add('D', now.ms);
    // A telegram that the layout would not make from this message: what is sent is what was offered.
    f.offer(d, true, undefined, { type: 'ASGN', data: 'ENCODED-BEFORE-THE-COMMIT' });
    expect(f.nextOutbound(2, false).map((o) => [o.ref.id, o.data])).toEqual([[d.id, 'ENCODED-BEFORE-THE-COMMIT']]);
    // Read back after a reconnect: encoded from the message.
    f.restart();
    const [again] = f.nextOutbound(2, false);
    expect(again?.ref.id).toBe(d.id);
    expect(again?.data).not.toBe('ENCODED-BEFORE-THE-COMMIT');
    expect(again?.data).toContain('D');
    ctx.dispose();
  });

  it('finds rows nobody offered only on the thorough look', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add } = feed(now);
    f.restart();
    const e = add('UNOFFERED', now.ms);
    expect(f.nextOutbound(4, false)).toEqual([]);
    expect(f.nextOutbound(4, true).map((o) => o.ref.id)).toEqual([e.id]);
    ctx.dispose();
  });

  it('drops an assignment past its time to live, when first sent and when about to be resent', () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add, dropped } = feed(now);
    const old = add('OLD', now.ms - 11_000);
    const fresh = add('FRESH', now.ms);
    f.restart();
    expect(f.nextOutbound(4, false).map((o) => o.ref.id)).toEqual([fresh.id]);
    expect(dropped).toEqual([[old.id, 'older than AssignmentTtlSeconds (11 s)']]);
    expect(f.stillWanted(fresh)).toBe(true);
    now.ms += 10_500;
    expect(f.stillWanted(fresh)).toBe(false);
    ctx.dispose();
  });

  it("counts an assignment's age on the clock that never steps: a step of the system clock neither drops it nor keeps it", () => {
    const now: { ms: number; stepMs?: number } = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add, dropped } = feed(now);
    f.restart();
    const fresh = add('FRESH', now.ms);
    f.offer(fresh, true);
    // NTP sets a clock that started an hour behind: the assignment, a second old, goes out.
    now.ms += 1000;
    now.stepMs = 3_600_000;
    expect(f.nextOutbound(4, false).map((o) => o.ref.id)).toEqual([fresh.id]);
    expect(f.stillWanted(fresh)).toBe(true);
    // Then back by two hours: it still expires once 10 s have passed since its POST.
    now.stepMs = -3_600_000;
    now.ms += 8_000;
    expect(f.stillWanted(fresh)).toBe(true);
    now.ms += 1_500;
    expect(f.stillWanted(fresh)).toBe(false);
    expect(dropped).toEqual([[fresh.id, 'older than AssignmentTtlSeconds (11 s)']]);
    ctx.dispose();
  });

  it('ages a row it did not see created by the wall clock when it first reads it; one dated ahead of the wall clock from then on', () => {
    const now: { ms: number; stepMs?: number } = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, add, dropped } = feed(now);
    // Rows of an earlier run: one 5 s old by the wall clock, one dated an hour ahead of it (the clock stepped back since).
    const older = add('OLDER', now.ms - 5_000);
    const ahead = add('AHEAD', now.ms + 3_600_000);
    f.restart();
    expect(f.nextOutbound(4, false).map((o) => o.ref.id)).toEqual([older.id, ahead.id]);
    now.ms += 5_500;
    expect(f.stillWanted(older)).toBe(false);
    expect(f.stillWanted(ahead)).toBe(true);
    now.ms += 5_000;
    expect(f.stillWanted(ahead)).toBe(false);
    expect(dropped.map(([id]) => id)).toEqual([older.id, ahead.id]);
    ctx.dispose();
  });

  it('delivers a data telegram from the sorter to the telegram trigger, decoded, with when it arrived', async () => {
    const now = { ms: Date.parse('2026-11-22T08:00:00Z') };
    const { ctx, f, received, peerSessions } = feed(now);
    const verify = { Type: 'VERIFY' as const, TrackID: '0000001', Barcode: 'B1', Destination: 'D001', MessageCode: 212 as const };
    const { type, data } = sorterMessageData(verify);
    await f.deliver({ sender: 'PLC', receiver: 'HOST', seq: 7, type, flag: 'D', data, arrivedAt: 1234.5 }, 6, true);
    expect(received).toEqual([['VERI', { seq: 7, after: 6, message: verify, arrivedAt: 1234.5, resent: true }]]);
    f.peerSession('P2', 41);
    expect(peerSessions).toEqual([['P2', 41]]);
    ctx.dispose();
  });
});
