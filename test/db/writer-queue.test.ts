// The commands' way to the writer and back, with a fake writer: batching per turn (or half of
// the commit window for the writes nobody waits for at once), answers after
// the commit, cancellation, slices of the backlog, and a writer gone. (On a real thread and file:
// writer.test.ts.)
import { WINDOW_MAX_WRITES, WINDOW_MS } from '../../db/commit-plan';
import {
  type CommandResult,
  FlagSlots,
  POST_GROUP_MAX,
  POST_GROUP_MS,
  WriteCancelled,
  WriteFailed,
  WriteQueue,
  coalesceMs,
  gatheringOf,
} from '../../db/writer';
import { type Command, Cancel, FLAGS_PER_SLAB } from '../../db/writer-protocol';
import { atLeast, nth } from '../helpers/nth';

const nextTurn = () => new Promise((r) => setImmediate(r));
/** Run the microtasks the answers queued (promise callbacks), but no next turn. */
const microtasks = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('WriteQueue', () => {
  let posted: Command[][];
  let commits: Array<[number, number]>;
  let queue: WriteQueue;
  beforeEach(() => {
    posted = [];
    commits = [];
    queue = new WriteQueue(
      (batch) => posted.push(batch),
      (writes, waited) => commits.push([writes, waited.length]),
    );
  });
  const ok = (c: Command, value: unknown = null): CommandResult => [c.seq, true, value];

  it('hands the commands of one turn to the writer together, after that turn, and answers each with its result', async () => {
    const a = queue.run('purgeHistory', ['T', 10]);
    const b = queue.run('expireRequests', [{ upToId: 0, firstId: 1, before: 'T' }, 'T2']);
    expect(posted).toEqual([]);
    await nextTurn();
    expect(posted.map((batch) => batch.map((c) => c.op))).toEqual([['purgeHistory', 'expireRequests']]);
    expect(queue.pending).toBe(2);
    const [first, second] = atLeast(2, nth(posted, 0));
    queue.settle([ok(first, 3), ok(second, 4)], true);
    expect([await a, await b]).toEqual([3, 4]);
    expect(queue.pending).toBe(0);
    expect(commits).toEqual([[2, 2]]);
  });

  it('lets the writes nobody waits for at once gather for half the commit window (at most 50 ms), crossing on time told they waited nothing; a POST takes them along at the end of its turn', () => {
    expect([coalesceMs(WINDOW_MS), coalesceMs(5), coalesceMs(0)]).toEqual([50, 2.5, 0]);
    // On the fake clock: a busy machine may take longer than the wait between two turns.
    jest.useFakeTimers();
    try {
      const stored = { id: 1, queue: 'sortation', message: {}, receivedAt: 'T' } as never;
      void queue.run('acceptFromPeer', [1, 'PLC01', 1, {} as never, 'T', false] as never);
      jest.advanceTimersByTime(10);
      void queue.run('deliver', [stored, { deliveredAt: 'T', clientAddress: null }]);
      jest.advanceTimersByTime(39);
      expect(posted).toEqual([]);
      jest.advanceTimersByTime(1); // 50 ms after the first
      expect(posted.map((batch) => batch.map((c) => c.op))).toEqual([['acceptFromPeer', 'deliver']]);
      // Crossed on time: the wait for company is not counted against the writer's window and hold
      // (a busy event loop's delay past it is: test/db/writer.test.ts).
      expect(nth(posted, 0).map((c) => Math.round(c.waited ?? -1))).toEqual([0, 0]);
      void queue.run('removeFromOutbox', [1, 'T'] as never);
      void queue.run('addToOutbox', [{ kind: 'ASSIGNMENT', body: { TrackID: '1', Destination: 'D1' } }, null, 'T'] as never);
      jest.advanceTimersByTime(0); // the end of the turn
      expect(posted.map((batch) => batch.map((c) => c.op))).toEqual([
        ['acceptFromPeer', 'deliver'],
        ['removeFromOutbox', 'addToOutbox'],
      ]);
      jest.advanceTimersByTime(60);
      expect(posted).toHaveLength(2);
      // A short commit window (HandOutBeforeCommit false: a decision waits it) gathers as briefly.
      const short = new WriteQueue((batch) => posted.push(batch), undefined, {
        coalesceMs: coalesceMs(5),
        postGroupMs: 0,
        telegrams: WINDOW_MAX_WRITES,
      });
      void short.run('acceptFromPeer', [1, 'PLC01', 1, {} as never, 'T', false] as never);
      jest.advanceTimersByTime(1);
      expect(posted).toHaveLength(2);
      jest.advanceTimersByTime(2);
      expect(posted).toHaveLength(3);
    } finally {
      jest.useRealTimers();
    }
  });

  it("lets a sorter's telegrams gather only while fewer than its window are waiting: a stop-and-wait sorter's goes at the end of the turn", () => {
    jest.useFakeTimers();
    try {
      const telegram = (q: WriteQueue, seq: number) => void q.run('acceptFromPeer', [seq, 'PLC01', seq, {} as never, 'T', false] as never);
      const sent = () => posted.map((batch) => batch.length);
      // Window 1 (a layout that acknowledges each telegram before the next): no wait at all.
      const one = new WriteQueue((batch) => posted.push(batch), undefined, {
        coalesceMs: coalesceMs(WINDOW_MS),
        postGroupMs: 0,
        telegrams: 1,
      });
      telegram(one, 1);
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1]);
      telegram(one, 2);
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1, 1]);
      // Window 3: two wait for company, the third takes them along at the end of its turn.
      const three = new WriteQueue((batch) => posted.push(batch), undefined, {
        coalesceMs: coalesceMs(WINDOW_MS),
        postGroupMs: 0,
        telegrams: 3,
      });
      telegram(three, 1);
      jest.advanceTimersByTime(1);
      telegram(three, 2);
      jest.advanceTimersByTime(1);
      expect(sent()).toEqual([1, 1]);
      telegram(three, 3);
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1, 1, 3]);
      // The count starts again after each hand-over: the next one waits half the window.
      telegram(three, 4);
      jest.advanceTimersByTime(coalesceMs(WINDOW_MS) - 1);
      expect(sent()).toEqual([1, 1, 3]);
      jest.advanceTimersByTime(1);
      expect(sent()).toEqual([1, 1, 3, 1]);
    } finally {
      jest.useRealTimers();
    }
  });

  it("takes the writer's gathering from its commit window: the telegrams its window may hold (the sorter's send window), half its time", () => {
    expect(gatheringOf({})).toEqual({ coalesceMs: 50, postGroupMs: POST_GROUP_MS, telegrams: WINDOW_MAX_WRITES });
    expect(gatheringOf({ timing: { windowMs: 50, holdMs: 50, maxWrites: 1 }, postGroupMs: 0 })).toEqual({
      coalesceMs: 25,
      postGroupMs: 0,
      telegrams: 1,
    });
  });

  it('while POSTs come less than POST_GROUP_MS apart, their entries wait for each other (at most POST_GROUP_MAX) and cross together; a lone one goes at the end of its turn', () => {
    jest.useFakeTimers();
    try {
      const entry = (t: string) =>
        void queue.runUnsynced('addToOutboxUnsynced', [
          { kind: 'ASSIGNMENT', body: { TrackID: t, Destination: 'D1' } },
          null,
          'T',
        ] as never);
      const sent = () => posted.map((batch) => batch.length);
      entry('A'); // none came before it
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1]);
      jest.advanceTimersByTime(1);
      entry('B'); // 1 ms after A: waits for company
      jest.advanceTimersByTime(2);
      entry('C');
      jest.advanceTimersByTime(POST_GROUP_MS - 3);
      expect(sent()).toEqual([1]);
      jest.advanceTimersByTime(1); // POST_GROUP_MS after B
      expect(sent()).toEqual([1, 2]);
      // A burst: POST_GROUP_MAX waiting go at the end of the turn.
      for (let i = 0; i < POST_GROUP_MAX; i++) entry(`D${i}`);
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1, 2, POST_GROUP_MAX]);
      // Further apart than POST_GROUP_MS: none waits.
      jest.advanceTimersByTime(POST_GROUP_MS + 1);
      entry('E');
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1, 2, POST_GROUP_MAX, 1]);
      // PostGroupMs 0: never.
      const never = new WriteQueue((batch) => posted.push(batch), undefined, {
        coalesceMs: coalesceMs(WINDOW_MS),
        postGroupMs: 0,
        telegrams: WINDOW_MAX_WRITES,
      });
      void never.runUnsynced('addToOutboxUnsynced', [
        { kind: 'ASSIGNMENT', body: { TrackID: 'F', Destination: 'D1' } },
        null,
        'T',
      ] as never);
      void never.runUnsynced('addToOutboxUnsynced', [
        { kind: 'ASSIGNMENT', body: { TrackID: 'G', Destination: 'D1' } },
        null,
        'T',
      ] as never);
      jest.advanceTimersByTime(0);
      expect(sent()).toEqual([1, 2, POST_GROUP_MAX, 1, 2]);
    } finally {
      jest.useRealTimers();
    }
  });

  it("a command's own failure rejects it alone; a failed transaction is no commit", async () => {
    const a = queue.run('purgeHistory', ['T', 10]);
    const b = queue.run('purgeHistory', ['T', 10]);
    queue.flush();
    const [ca, cb] = atLeast(2, nth(posted, 0));
    queue.settle([[ca.seq, false, 'CHECK constraint failed'], ok(cb, 1)], true);
    await expect(a).rejects.toThrow(new WriteFailed('purgeHistory', 'CHECK constraint failed'));
    await expect(b).resolves.toBe(1);
    const c = queue.run('purgeHistory', ['T', 10]);
    queue.flush();
    queue.settle([[nth(nth(posted, 1), 0).seq, false, 'disk I/O error']], false);
    await expect(c).rejects.toThrow('purgeHistory failed: disk I/O error');
    expect(commits).toEqual([[2, 2]]);
  });

  it('cancelAfterMs: refused if the writer has not taken it by then, waited for if it has', async () => {
    const flags = new FlagSlots(() => {});
    queue = new WriteQueue((batch) => posted.push(batch), undefined, undefined, flags);
    const flagOf = (c: Command) => flags.flag(c.cancel ?? -1);
    const refused = queue.run('purgeHistory', ['T', 10], { cancelAfterMs: 20 });
    const taken = queue.run('purgeHistory', ['T', 10], { cancelAfterMs: 20 });
    queue.flush();
    const [cRefused, cTaken] = atLeast(2, nth(posted, 0));
    expect(Atomics.compareExchange(flagOf(cTaken), 0, Cancel.Queued, Cancel.Taken)).toBe(Cancel.Queued);
    await expect(refused).rejects.toThrow(new WriteCancelled('purgeHistory', 20));
    expect(flagOf(cRefused)[0]).toBe(Cancel.Cancelled); // the writer will skip it
    expect(queue.pending).toBe(1);
    queue.settle([ok(cTaken, 7)], true);
    await expect(taken).resolves.toBe(7);
    // The answered command's flag serves again; the cancelled one's only once the writer has skipped it.
    expect(flags.inUse).toBe(1);
    queue.skipped([cRefused.seq]);
    expect(flags.inUse).toBe(0);
  });

  it('the cancel flags live in shared slabs: each slab announced before the first command that uses it, each slot free again once the writer is done with it', async () => {
    const told: string[] = [];
    const flags = new FlagSlots((index, slab) => told.push(`slab ${index}: ${slab.byteLength} bytes`));
    queue = new WriteQueue(
      (batch) => {
        posted.push(batch);
        told.push(`${batch.length} commands`);
      },
      undefined,
      undefined,
      flags,
    );
    const entry = { kind: 'ASSIGNMENT', body: { TrackID: '1', Destination: 'D1' } } as never;
    const post = () => queue.runUnsynced('addToOutboxUnsynced', [entry, null, 'T'], { cancelAfterMs: 2000 });
    const posts = Array.from({ length: FLAGS_PER_SLAB + 1 }, post);
    queue.flush();
    expect(told).toEqual([`slab 0: ${FLAGS_PER_SLAB * 4} bytes`, `slab 1: ${FLAGS_PER_SLAB * 4} bytes`, `${FLAGS_PER_SLAB + 1} commands`]);
    const commands = nth(posted, 0);
    expect(new Set(commands.map((c) => c.cancel)).size).toBe(FLAGS_PER_SLAB + 1);
    // Claimed by the writer and committed, each owes a sync: the writer looks at its flag until then (or until it is durable another way).
    for (const c of commands)
      expect(Atomics.compareExchange(flags.flag(c.cancel ?? -1), 0, Cancel.Queued, Cancel.Taken)).toBe(Cancel.Queued);
    queue.settle(
      commands.map((c) => ok(c, 1)),
      true,
    );
    const answers = await Promise.all(posts);
    expect(flags.inUse).toBe(FLAGS_PER_SLAB + 1);
    const [first, second] = atLeast(2, commands);
    queue.synced([first.seq], null);
    expect(flags.inUse).toBe(FLAGS_PER_SLAB);
    // Durable another way: its flag tells the writer, and the slot serves again; what is reported later changes nothing.
    nth(answers, 1).durableElsewhere();
    expect(flags.flag(second.cancel ?? -1)[0]).toBe(Cancel.DurableElsewhere);
    expect(flags.inUse).toBe(FLAGS_PER_SLAB - 1);
    queue.synced([second.seq], null);
    nth(answers, 1).durableElsewhere();
    expect(flags.inUse).toBe(FLAGS_PER_SLAB - 1);
    // The next command takes a slot set free, its flag Queued again; no new slab.
    const next = post();
    queue.flush();
    const [nextCommand] = atLeast(1, nth(posted, 1));
    expect([first.cancel, second.cancel]).toContain(nextCommand.cancel);
    expect(flags.flag(nextCommand.cancel ?? -1)[0]).toBe(Cancel.Queued);
    expect(told.filter((t) => t.startsWith('slab'))).toHaveLength(2);
    // A writer gone: every slot is free.
    queue.failAll('the writer thread exited (1)');
    await expect(next).rejects.toThrow(WriteFailed);
    expect(flags.inUse).toBe(0);
  });

  it('a long backlog is answered 32 at a time, the event loop getting a turn in between; the commit is told once', async () => {
    const answered: number[] = [];
    for (let i = 0; i < 70; i++) void queue.run('purgeHistory', ['T', i]).then(() => answered.push(i));
    queue.flush();
    queue.settle(
      nth(posted, 0).map((c) => ok(c)),
      true,
    );
    await microtasks();
    expect(answered).toHaveLength(32);
    await nextTurn();
    await microtasks();
    expect(answered).toHaveLength(64);
    await nextTurn();
    await microtasks();
    expect(answered).toEqual([...Array(70).keys()]);
    expect(commits).toEqual([[70, 70]]);
  });

  it('a writer gone fails every command still waiting', async () => {
    const waiting = [queue.run('purgeHistory', ['T', 1]), queue.run('purgeHistory', ['T', 2], { cancelAfterMs: 10_000 })];
    queue.failAll('the writer thread exited (1)');
    for (const w of waiting) await expect(w).rejects.toThrow('purgeHistory failed: the writer thread exited (1)');
    expect(queue.pending).toBe(0);
  });

  it('a durable write committed before its sync (the sync runs beside the writer) is answered when the writer says it is synced, not at its commit', async () => {
    const settled: string[] = [];
    const a = queue.run('acceptFromPeer', ['PLC01', 2, 1, {} as never, 'T', false, 1] as never).then((v) => settled.push(`a ${String(v)}`));
    const b = queue.run('acceptFromPeer', ['PLC01', 3, 2, {} as never, 'T', false, 2] as never).then((v) => settled.push(`b ${String(v)}`));
    const c = queue.run('acceptFromPeer', ['PLC01', 4, 3, {} as never, 'T', false, 3] as never);
    queue.flush();
    const [ca, cb, cc] = atLeast(3, nth(posted, 0));
    // b's sync is reported before its commit is settled here (answers travel in order, settling goes in slices).
    queue.synced([cb.seq], null);
    queue.settle([ok(ca, 'A'), ok(cb, 'B'), ok(cc, 'C')], true, [ca.seq, cb.seq, cc.seq]);
    await microtasks();
    expect(settled).toEqual(['b B']);
    expect(queue.pending).toBe(0);
    queue.synced([ca.seq], null);
    queue.synced([cc.seq], 'EIO: i/o error');
    await microtasks();
    expect(settled).toEqual(['b B', 'a A']);
    await expect(c).rejects.toThrow('sync failed: EIO: i/o error');
    // A second report of the same sync (an early answer, then the sync itself) changes nothing.
    queue.synced([ca.seq, cb.seq], null);
    await Promise.all([a, b]);
    expect(settled).toEqual(['b B', 'a A']);
  });
});
