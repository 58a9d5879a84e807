// db/commit-plan.ts: which waiting writes go into the writer's next transaction, and synced or not.
import { HOLD_MAX_WRITES, HOLD_MS, type Held, WINDOW_MAX_WRITES, WINDOW_MS, planTransaction, wakeAt } from '../../db/commit-plan';
import type { WriteOp } from '../../db/commands';
import { nth } from '../helpers/nth';

let seq = 0;
const cmd = (op: WriteOp, at: number, args: unknown[] = []): Held => ({ seq: ++seq, op, args, at });
const request = (trackId: string) => ({ Type: 'REQUEST', TrackID: trackId, Barcode: '', InductLocation: 'I1', MessageCode: 1 });
const delivered = (trackId: string, at: number) =>
  cmd('deliver', at, [{ id: 1, queue: 'sortation', message: request(trackId), receivedAt: 'T' }, {}]);
const accept = (trackId: string, at: number) => cmd('acceptFromPeer', at, ['PLC01', 2, 1, request(trackId), 'T', true]);
const seqs = (cs: Held[] | undefined) => cs?.map((c) => c.seq);
/** A commit window shorter than the hold (HandOutBeforeCommit false takes 5 ms). */
const SHORT = { windowMs: 5, holdMs: HOLD_MS };

describe('planTransaction', () => {
  it('nothing waiting: nothing to do', () => {
    expect(planTransaction([], 0)).toBeNull();
  });

  it('writes that need no sync are held HOLD_MS, then committed together without a sync', () => {
    const held = [delivered('A', 0), cmd('purgeHistory', 10, ['T', 1000])];
    expect(planTransaction(held, HOLD_MS - 1)).toBeNull();
    expect(wakeAt(held)).toBe(HOLD_MS);
    expect(planTransaction(held, HOLD_MS)).toEqual({ batch: held, rest: [], synced: false });
  });

  it('a telegram waits WINDOW_MS for company, then goes ahead of the held writes, synced', () => {
    const held = delivered('A', 0);
    const telegram = accept('B', 10);
    expect(planTransaction([held, telegram], 10 + WINDOW_MS - 1)).toBeNull();
    expect(wakeAt([held, telegram])).toBe(10 + WINDOW_MS);
    // The held write has been held long enough by then: it goes along.
    expect(seqs(planTransaction([held, telegram], 10 + WINDOW_MS)!.batch)).toEqual([held.seq, telegram.seq]);
    // A window shorter than the hold: the telegram goes ahead, the held write stays.
    const plan = planTransaction([held, telegram], 10 + SHORT.windowMs, false, SHORT)!;
    expect({ batch: seqs(plan.batch), rest: seqs(plan.rest), synced: plan.synced }).toEqual({
      batch: [telegram.seq],
      rest: [held.seq],
      synced: true,
    });
  });

  it('a POST waits for nothing (its WCS waits for the answer): it goes at once, with the telegrams in their window', () => {
    const held = delivered('A', 0);
    const telegram = accept('B', 10);
    const post = cmd('addToOutbox', 12);
    expect(seqs(planTransaction([held, post], 0 + 12)!.batch)).toEqual([post.seq]);
    const plan = planTransaction([held, telegram, post], 12)!;
    expect({ batch: seqs(plan.batch), rest: seqs(plan.rest), synced: plan.synced }).toEqual({
      batch: [telegram.seq, post.seq],
      rest: [held.seq],
      synced: true,
    });
    expect(wakeAt([held, telegram, post])).toBe(10);
  });

  it("a POST's entry sent before its sync (addToOutboxUnsynced) goes at once, unsynced, with the held writes before the first durable one; the telegrams wait on", () => {
    const held = delivered('A', 0);
    const telegram = accept('B', 10);
    const later = delivered('C', 11);
    const post = cmd('addToOutboxUnsynced', 12);
    expect(wakeAt([held, telegram, later, post])).toBe(12);
    const plan = planTransaction([held, telegram, later, post], 12)!;
    expect({ batch: seqs(plan.batch), rest: seqs(plan.rest), synced: plan.synced }).toEqual({
      batch: [held.seq, post.seq],
      rest: [telegram.seq, later.seq],
      synced: false,
    });
    // Joining a synced transaction (group commit), it goes with the durable writes, synced.
    const joined = planTransaction([telegram, post], 12, true)!;
    expect({ batch: seqs(joined.batch), synced: joined.synced }).toEqual({ batch: [telegram.seq, post.seq], synced: true });
  });

  it('WINDOW_MAX_WRITES telegrams in their window go at once: the sorter, which keeps only so many unacknowledged, is never kept waiting', () => {
    const telegrams = Array.from({ length: WINDOW_MAX_WRITES }, (_, i) => accept(`T${i}`, 0));
    expect(planTransaction(telegrams.slice(0, -1), 1)).toBeNull();
    expect(planTransaction(telegrams, 1)).toEqual({ batch: telegrams, rest: [], synced: true });
  });

  it('HOLD_MAX_WRITES held (a burst of deliveries) are committed at once, without a sync: a crash loses no more', () => {
    const burst = Array.from({ length: HOLD_MAX_WRITES }, (_, i) => delivered(`A${i}`, i));
    expect(planTransaction(burst.slice(0, -1), HOLD_MAX_WRITES)).toBeNull();
    expect(planTransaction(burst, HOLD_MAX_WRITES)).toEqual({ batch: burst, rest: [], synced: false });
  });

  it('held writes past HOLD_MS ride with the next synced commit, in order', () => {
    const queue = [delivered('A', 0), accept('B', HOLD_MS)];
    expect(planTransaction(queue, HOLD_MS + WINDOW_MS)).toEqual({ batch: queue, rest: [], synced: true });
  });

  it('a durable write that must keep its place (an operator requeue, the link session) takes everything, in order', () => {
    for (const op of ['requeueDeadLetters', 'setPeerSession', 'enqueue', 'clearQueues'] as WriteOp[]) {
      const queue = [cmd('deadLetter', 0), cmd(op, 1)];
      expect(planTransaction(queue, 1 + WINDOW_MS)).toEqual({ batch: queue, rest: [], synced: true });
    }
  });

  it('a REQUEST that supersedes its item does not overtake a held delivery of the same item (it is recorded as delivered)', () => {
    const same = [delivered('A', 0), accept('A', 1)];
    expect(planTransaction(same, 1 + SHORT.windowMs, false, SHORT)).toEqual({ batch: same, rest: [], synced: true });
    const other = [delivered('A', 0), accept('B', 1)];
    expect(seqs(planTransaction(other, 1 + SHORT.windowMs, false, SHORT)!.batch)).toEqual([nth(other, 1).seq]);
  });

  it('closing waits for nothing; joining a synced transaction under way waits for no window', () => {
    const queue = [delivered('A', 0), cmd('addToOutbox', 0)];
    expect(planTransaction(queue, Infinity)).toEqual({ batch: queue, rest: [], synced: true });
    expect(seqs(planTransaction([cmd('addToOutbox', 5)], 5, true)!.batch)).toHaveLength(1);
  });
});

describe('wakeAt', () => {
  it('a durable write in its window sets the time, even when a held write is due earlier (no busy wait)', () => {
    expect(wakeAt([delivered('A', 0), accept('B', HOLD_MS)])).toBe(HOLD_MS + WINDOW_MS);
    expect(wakeAt([])).toBe(Infinity);
  });

  it("a site's timing (CommitWindowMs, UnsyncedHoldMs) replaces the defaults", () => {
    const timing = { windowMs: 30, holdMs: 400 };
    const held = [delivered('A', 0)];
    expect(planTransaction(held, HOLD_MS, false, timing)).toBeNull();
    expect(wakeAt(held, timing)).toBe(400);
    expect(planTransaction(held, 400, false, timing)).toEqual({ batch: held, rest: [], synced: false });
    const telegram = [accept('B', 0)];
    expect(planTransaction(telegram, 29, false, timing)).toBeNull();
    expect(wakeAt(telegram, timing)).toBe(30);
    expect(planTransaction(telegram, 30, false, timing)).toEqual({ batch: telegram, rest: [], synced: true });
    expect(planTransaction(telegram, 0, false, { windowMs: 0, holdMs: 0 })).toEqual({ batch: telegram, rest: [], synced: true });
  });
});
