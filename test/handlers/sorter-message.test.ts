// The telegram trigger as a handler: a message from the sorter committed to its queue (a real
// SQLite file), the waiting client woken, its wake latency started; out of sequence refused.
import { StoredAges } from '../../lib/queue/arrivals';
import fc from 'fast-check';
import { createLinkStore } from '../../db/link-store';
import { createQueueStore } from '../../db/queue-store';
import { deadLetterWrites } from '../../db/dead-letter-store';
import { acceptSorterMessage } from '../../handlers/sorter-message';
import { EmptyTableMemo, QueueDispatcher, UncommittedMessages } from '../../lib/queue/dispatcher';
import { WakeMeter } from '../../lib/ops/latency';
import { createLogger } from '../../lib/process/logger';
import { clock } from '../helpers/handler-fakes';
import { freshDb } from '../helpers/db';
import { atLeast, nth } from '../helpers/nth';

/** `memoMs`: how long the table is known to hold only claimed rows (0: read at every take); `now` its clock. */
function setup(memoMs = 0, now = () => performance.now()) {
  const ctx = freshDb();
  const queues = createQueueStore(ctx.db);
  const links = createLinkStore(ctx.db, queues);
  links.ensurePeerSession('PLC01', 'T');
  const uncommitted = new UncommittedMessages(queues.lastId, new EmptyTableMemo(memoMs, now));
  const reads = { head: 0 };
  const deadLetters = deadLetterWrites(ctx.db);
  const store = uncommitted.over({
    ...queues,
    deadLetter: deadLetters.deadLetter,
    head: (queue, skip) => (reads.head++, queues.head(queue, skip)),
  });
  const dispatchers = { sortation: new QueueDispatcher('sortation', store), destination: new QueueDispatcher('destination', store) };
  const counted: Array<{ queue: string; type: string }> = [];
  const requested: string[] = [];
  const deps = {
    metrics: { messagesIn: { inc: (labels: { queue: string; type: string }) => void counted.push(labels) } },
    decisions: { requested: (trackId: string) => void requested.push(trackId) },
    links: { acceptFromPeer: async (...a: Parameters<typeof links.acceptFromPeer>) => links.acceptFromPeer(...a) },
    dispatchers,
    uncommitted,
    failingPeers: new Set<string>(),
    storage: { prompt: () => true },
    wake: new WakeMeter(),
    settings: { Sorter: { PeerName: 'PLC01' }, DropSupersededRequests: true, HandOutBeforeCommit: false },
    requestsRemoved: { Superseded: 0, Expired: 0 },
    ages: new StoredAges(clock),
    clock,
    log: createLogger('silent'),
  };
  return { ctx, queues, links, dispatchers, deps, counted, requested, uncommitted, reads, store, deadLetters };
}

const verify = { Type: 'VERIFY', TrackID: '0004711', Barcode: '', Destination: 'D1', MessageCode: 212 } as const;
const scan = {
  Type: 'SCAN',
  Destination: 'D1',
  DestinationStatus: 'Ready',
  DestinationText: '',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: null,
} as const;

describe('acceptSorterMessage', () => {
  it('commits a VERIFY to the sortation queue and a SCAN to the destination queue, with their numbers', async () => {
    const { ctx, queues, links, deps, counted, requested } = setup();
    await acceptSorterMessage(deps, { seq: 1, after: 0, message: verify, arrivedAt: performance.now() });
    const result = await acceptSorterMessage(deps, { seq: 2, after: 1, message: scan, arrivedAt: performance.now() });
    expect(counted).toEqual([
      { queue: 'sortation', type: 'VERIFY' },
      { queue: 'destination', type: 'SCAN' },
    ]);
    expect(requested).toEqual([]); // only a REQUEST starts a decision
    expect(result).toMatchObject({ kind: 'ok', body: { Queue: 'destination' } });
    expect([queues.depth('sortation'), queues.depth('destination')]).toEqual([1, 1]);
    expect(links.session('PLC01')!.lastSeqIn).toBe(2);
    ctx.dispose();
  });

  it('wakes the client waiting on that queue and starts its wake latency', async () => {
    const { ctx, dispatchers, deps } = setup();
    const waiting = dispatchers.sortation.take(5000);
    expect(dispatchers.sortation.waiting).toBe(1);
    await acceptSorterMessage(deps, { seq: 1, after: 0, message: verify, arrivedAt: performance.now() });
    const claim = await waiting;
    expect(claim?.stored.message).toEqual(verify);
    deps.wake.written('sortation', claim!.stored.id);
    expect(deps.wake.window.summary().Samples).toBe(1);
    ctx.dispose();
  });

  it('refuses a message whose predecessor is not stored, and queues nothing', async () => {
    const { ctx, queues, deps } = setup();
    await expect(acceptSorterMessage(deps, { seq: 5, after: 4, message: verify, arrivedAt: 0 })).rejects.toThrow(/out of sequence/);
    expect(queues.depth('sortation')).toBe(0);
    ctx.dispose();
  });

  it('takes the older REQUESTs of an item that went round again out of the queue, into the history as Superseded', async () => {
    const { ctx, queues, deps, requested } = setup();
    const request = (track: string, recirculation: number) =>
      ({
        Type: 'REQUEST',
        TrackID: track,
        Barcode: 'B',
        MessageCode: 210,
        InductLocation: 'IND01',
        RecirculationCount: recirculation,
        Length: 1,
        Width: 1,
        Height: 1,
        Weight: 1,
      }) as const;
    await acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A', 0), arrivedAt: 0 });
    await acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B', 0), arrivedAt: 0 });
    await acceptSorterMessage(deps, { seq: 3, after: 2, message: { ...verify, TrackID: 'A' }, arrivedAt: 0 });
    await acceptSorterMessage(deps, { seq: 4, after: 3, message: request('A', 1), arrivedAt: 0 });
    const waiting = ctx.db
      .prepare("SELECT type || ':' || track_id || ':' || coalesce(recirculation_count, '') FROM sortation_queue ORDER BY id")
      .pluck()
      .all();
    expect(waiting).toEqual(['REQUEST:B:0', 'VERIFY:A:', 'REQUEST:A:1']); // the VERIFY stays: only REQUESTs are superseded
    expect(ctx.db.prepare('SELECT track_id, removed_reason, client_address, body FROM delivered_messages').all()).toEqual([
      { track_id: 'A', removed_reason: 'Superseded', client_address: null, body: JSON.stringify(request('A', 0)) },
    ]);
    expect(deps.requestsRemoved.Superseded).toBe(1);
    expect(requested).toEqual(['A', 'B', 'A']); // each REQUEST starts its decision
    expect(queues.depth('sortation')).toBe(3);
    // Turned off: everything stays.
    deps.settings.DropSupersededRequests = false;
    await acceptSorterMessage(deps, { seq: 5, after: 4, message: request('B', 1), arrivedAt: 0 });
    expect(queues.depth('sortation')).toBe(4);
    ctx.dispose();
  });
});

/**
 * The deps with HandOutBeforeCommit and commits that wait for their turn (the writer's commit
 * window): `commitNext` lets the oldest waiting one through; `release` lets every one through,
 * those waiting and those to come, or (false) fails them as a full disk does.
 */
function gatedCommits(memoMs: number, now?: () => number) {
  const s = setup(memoMs, now);
  s.deps.settings.HandOutBeforeCommit = true;
  const gates: Array<(ok: boolean) => void> = [];
  let released: boolean | null = null;
  const accept = s.deps.links.acceptFromPeer;
  s.deps.links.acceptFromPeer = async (...a) => {
    if (!(await (released ?? new Promise<boolean>((r) => gates.push(r))))) throw new Error('SQLITE_FULL: database or disk is full');
    return accept(...a);
  };
  const release = (ok: boolean) => {
    released = ok;
    for (const gate of gates.splice(0)) gate(ok);
  };
  const commitNext = async () => {
    gates.shift()!(true);
    await new Promise((r) => setImmediate(r));
  };
  return { ...s, release, commitNext, pending: () => gates.length };
}

describe.each([
  ['', 0],
  [', the table memo on', 60_000],
])('acceptSorterMessage with HandOutBeforeCommit%s', (_, memoMs) => {
  const request = (track: string) =>
    ({
      Type: 'REQUEST',
      TrackID: track,
      Barcode: 'B',
      MessageCode: 210,
      InductLocation: 'IND01',
      RecirculationCount: 0,
      Length: 1,
      Width: 1,
      Height: 1,
      Weight: 1,
    }) as const;

  const gated = () => gatedCommits(memoMs);

  it('hands a message to the waiting client before its commit ends, under the id its row then has', async () => {
    const { ctx, queues, dispatchers, deps, uncommitted, release } = gated();
    const waiting = dispatchers.sortation.take(5000);
    const accepted = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: performance.now() });
    const claim = await waiting;
    expect(claim?.stored.message).toEqual(request('A'));
    expect(queues.depth('sortation')).toBe(0); // not committed yet
    expect(uncommitted.counts('sortation', dispatchers.sortation.claimedIds)).toEqual({ waiting: 0, handedOut: 1 });
    await expect(dispatchers.sortation.take(0)).resolves.toBeNull(); // handed out once
    release(true);
    const result = await accepted;
    expect(result).toMatchObject({ kind: 'ok', body: { Queue: 'sortation', Id: claim!.stored.id } });
    expect(ctx.db.prepare('SELECT id FROM sortation_queue').pluck().all()).toEqual([claim!.stored.id]);
    expect(uncommitted.counts('sortation', new Set())).toEqual({ waiting: 0, handedOut: 0 });
    await expect(dispatchers.sortation.take(0)).resolves.toBeNull(); // committed, still claimed
    await expect(claim!.commit({ deliveredAt: 'T', clientAddress: '127.0.0.1' })).resolves.toBe(true);
    expect(queues.depth('sortation')).toBe(0);
    ctx.dispose();
  });

  it('a message whose removal is committed before its own commit is told here (both in one transaction, answered in either order) is not handed out again', async () => {
    const s = setup(memoMs);
    s.deps.settings.HandOutBeforeCommit = true;
    let told!: () => void;
    const removalAnswered = new Promise<void>((r) => (told = r));
    const accept = s.deps.links.acceptFromPeer;
    // The row is committed at once; the handler hears of it only after the removal was answered.
    s.deps.links.acceptFromPeer = async (...a) => {
      const accepted = await accept(...a);
      await removalAnswered;
      return accepted;
    };
    const waiting = s.dispatchers.sortation.take(5000);
    const accepted = acceptSorterMessage(s.deps, { seq: 1, after: 0, message: request('A'), arrivedAt: performance.now() });
    const claim = await waiting;
    await new Promise((r) => setImmediate(r)); // the commit has run
    expect(s.queues.depth('sortation')).toBe(1);
    await expect(claim!.commit({ deliveredAt: 'T', clientAddress: '127.0.0.1' })).resolves.toBe(true);
    // No longer claimed, not yet settled by its own commit's answer: it must not come back.
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull();
    told();
    await accepted;
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull();
    expect(s.queues.depth('sortation')).toBe(0);
    s.ctx.dispose();
  });

  it('keeps the queue order: committed messages first, then those whose commit is under way, in arrival order; ids are never given twice', async () => {
    const { ctx, dispatchers, deps, release } = gated();
    deps.settings.HandOutBeforeCommit = false;
    const first = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0 });
    release(true);
    await first;
    deps.settings.HandOutBeforeCommit = true;
    const second = acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B'), arrivedAt: 0 });
    const third = acceptSorterMessage(deps, { seq: 3, after: 2, message: request('C'), arrivedAt: 0 });
    const taken = [await dispatchers.sortation.take(0), await dispatchers.sortation.take(0), await dispatchers.sortation.take(0)];
    expect(taken.map((c) => (c?.stored.message as { TrackID: string }).TrackID)).toEqual(['A', 'B', 'C']);
    expect(new Set(taken.map((c) => c!.stored.id)).size).toBe(3);
    await Promise.all([second, third]);
    expect(ctx.db.prepare('SELECT id FROM sortation_queue ORDER BY id').pluck().all()).toEqual(taken.map((c) => c!.stored.id));
    ctx.dispose();
  });

  it('a message whose commit fails leaves the queue: its delivery removes nothing, and the sorter is refused (it sends it again)', async () => {
    const { ctx, queues, dispatchers, deps, uncommitted, release } = gated();
    const waiting = dispatchers.sortation.take(5000);
    const accepted = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0 });
    const claim = await waiting;
    release(false);
    await expect(accepted).rejects.toThrow(/SQLITE_FULL/);
    expect(uncommitted.counts('sortation', new Set())).toEqual({ waiting: 0, handedOut: 0 });
    await expect(claim!.commit({ deliveredAt: 'T', clientAddress: '127.0.0.1' })).resolves.toBe(false);
    expect(queues.depth('sortation')).toBe(0);
    expect(ctx.db.prepare('SELECT count(*) FROM delivered_history').pluck().get()).toBe(0);
    ctx.dispose();
  });

  it("once a commit has failed, the peer's messages are handed out only once committed, the resend marked (attempt 2), until a commit passes again", async () => {
    const { ctx, dispatchers, deps, release } = gated();
    const first = dispatchers.sortation.take(5000);
    const failed = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0 });
    const early = await first;
    expect(early?.attempt).toBe(1); // handed out before its commit, which then fails
    release(false);
    await expect(failed).rejects.toThrow(/SQLITE_FULL/);
    await early!.commit({ deliveredAt: 'T', clientAddress: '127.0.0.1' });
    expect(deps.failingPeers.has('PLC01')).toBe(true);
    // The sorter's resend: not handed out while its commit is under way.
    const resendGates: Array<() => void> = [];
    const commit = async (...a: Parameters<typeof deps.links.acceptFromPeer>) => {
      await new Promise<void>((r) => resendGates.push(r));
      return createLinkStore(ctx.db, createQueueStore(ctx.db)).acceptFromPeer(...a);
    };
    deps.links.acceptFromPeer = commit;
    const second = dispatchers.sortation.take(5000);
    const resend = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0, resent: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(dispatchers.sortation.waiting).toBe(1); // nothing handed out before the commit
    resendGates.shift()!();
    await resend;
    const again = await second;
    expect([again?.stored.message, again?.attempt]).toEqual([request('A'), 2]);
    expect(deps.failingPeers.has('PLC01')).toBe(false);
    // Commits pass again: the next message goes out before its commit, as before.
    const third = dispatchers.sortation.take(5000);
    const next = acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B'), arrivedAt: 0 });
    expect((await third)?.stored.message).toEqual(request('B'));
    resendGates.shift()!();
    await next;
    ctx.dispose();
  });

  it('marks a telegram the sorter sent again after a restart as a possible duplicate (attempt 2): an earlier run may have handed it out', async () => {
    const { ctx, dispatchers, deps, release } = gated();
    release(true);
    await acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0, resent: true });
    await acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B'), arrivedAt: 0 });
    const [a, b] = [await dispatchers.sortation.take(0), await dispatchers.sortation.take(0)];
    expect([a?.attempt, b?.attempt]).toEqual([2, 1]);
    ctx.dispose();
  });

  it('while the storage is held up (a lock, a stalled disk), hands a message out only once committed: a WCS could not get its answer committed either', async () => {
    const { ctx, dispatchers, deps, release } = gated();
    deps.storage.prompt = () => false;
    const waiting = dispatchers.sortation.take(5000);
    const accepted = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0 });
    await new Promise((r) => setTimeout(r, 20));
    expect(dispatchers.sortation.waiting).toBe(1); // still waiting
    release(true);
    await accepted;
    expect((await waiting)?.stored.message).toEqual(request('A'));
    ctx.dispose();
  });

  it('a message committed late (the storage held up) and one handed out early meanwhile never share an id: delivering one never removes the other', async () => {
    const { ctx, dispatchers, deps, release } = gated();
    deps.storage.prompt = () => false;
    const a = acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0 });
    deps.storage.prompt = () => true;
    const b = acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B'), arrivedAt: 0 });
    const claim = await dispatchers.sortation.take(0);
    expect((claim?.stored.message as { TrackID: string }).TrackID).toBe('B'); // A is not committed yet
    release(true);
    await Promise.all([a, b]);
    await expect(claim!.commit({ deliveredAt: 'T', clientAddress: '127.0.0.1' })).resolves.toBe(true);
    expect(ctx.db.prepare('SELECT track_id FROM sortation_queue').pluck().all()).toEqual(['A']);
    expect(ctx.db.prepare('SELECT track_id FROM delivered_history').pluck().all()).toEqual(['B']);
    ctx.dispose();
  });

  it('ids come from memory after the first; a row added behind its back (an operator) costs one refusal, and the resend gets the next free id', async () => {
    const { ctx, deps, release } = gated();
    release(true);
    await acceptSorterMessage(deps, { seq: 1, after: 0, message: request('A'), arrivedAt: 0 });
    ctx.db
      .prepare(
        "INSERT INTO sortation_queue (id, type, message_code, track_id, barcode, received_at) VALUES (2, 'VERIFY', 212, 'OP', '', 'T')",
      )
      .run();
    // (Matched by its code: better-sqlite3's error class comes from another test file's realm when they share a worker.)
    await expect(acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B'), arrivedAt: 0 })).rejects.toMatchObject({
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
    await acceptSorterMessage(deps, { seq: 2, after: 1, message: request('B'), arrivedAt: 0 }); // the sorter's resend
    expect(ctx.db.prepare('SELECT id, track_id FROM sortation_queue ORDER BY id').all()).toEqual([
      { id: 1, track_id: 'A' },
      { id: 2, track_id: 'OP' },
      { id: 3, track_id: 'B' },
    ]);
    ctx.dispose();
  });
});

describe('the table memo: the queue table is not read while it holds only claimed rows', () => {
  const verify = (track: string) => ({ Type: 'VERIFY', TrackID: track, Barcode: '', Destination: 'D1', MessageCode: 212 }) as const;
  const delivery = { deliveredAt: 'T', clientAddress: '127.0.0.1' };
  const trackOf = (claim: { stored: { message: unknown } } | null) =>
    claim ? (claim.stored.message as { TrackID: string }).TrackID : null;

  /** A service-like setup: every commit waits for its turn (the writer's window), released in order by `commitNext`. */
  function held(memoMs: number, now: () => number = () => 0) {
    const s = gatedCommits(memoMs, now);
    let seq = 0;
    const arrive = (track: string) => {
      seq += 1;
      return acceptSorterMessage(s.deps, { seq, after: seq - 1, message: verify(track), arrivedAt: 0 });
    };
    return { ...s, arrive };
  }

  it('in steady traffic (each message handed out before its commit, then delivered) the table is read once, not at every take', async () => {
    for (const memoMs of [0, 60_000]) {
      const s = held(memoMs);
      for (let i = 0; i < 20; i++) {
        const waiting = s.dispatchers.sortation.take(5000);
        const accepted = s.arrive(`T${i}`);
        const claim = await waiting;
        expect(trackOf(claim)).toBe(`T${i}`);
        await s.commitNext();
        await accepted;
        await expect(claim!.commit(delivery)).resolves.toBe(true);
      }
      expect(s.queues.depth('sortation')).toBe(0);
      // Without the memo every take reads the table; with it, the first one does.
      if (memoMs === 0) expect(s.reads.head).toBeGreaterThanOrEqual(20);
      else expect(s.reads.head).toBe(1);
      s.ctx.dispose();
    }
  });

  it('a message that nobody took before its commit is handed out after it, though the table was found empty while that commit was under way', async () => {
    const s = held(60_000);
    const accepted = [s.arrive('X'), s.arrive('Y'), s.arrive('Z')];
    await new Promise((r) => setImmediate(r));
    const x = await s.dispatchers.sortation.take(0);
    const y = await s.dispatchers.sortation.take(0); // reads the table: nothing committed yet, X claimed
    expect([trackOf(x), trackOf(y)]).toEqual(['X', 'Y']);
    while (s.pending() > 0) await s.commitNext();
    await Promise.all(accepted);
    // Z has left the uncommitted list for the table, unclaimed: the memo must not hide it.
    expect(trackOf(await s.dispatchers.sortation.take(0))).toBe('Z');
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull();
    s.ctx.dispose();
  });

  it('a claim given back is handed out again at once', async () => {
    const s = held(60_000);
    const accepted = s.arrive('X');
    await new Promise((r) => setImmediate(r));
    await s.commitNext();
    await accepted;
    const claim = await s.dispatchers.sortation.take(0);
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull(); // the table holds only the claimed X
    claim!.release(true);
    const again = await s.dispatchers.sortation.take(0);
    expect([trackOf(again), again?.attempt]).toEqual(['X', 2]);
    s.ctx.dispose();
  });

  it("another process's row is seen when the change watcher notifies, or by any take once the memo is ExternalChangePollMs old", async () => {
    let now = 0;
    const s = held(100, () => now);
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull(); // the table is empty: known for 100 ms
    const insert = (track: string) =>
      s.ctx.db
        .prepare(`INSERT INTO sortation_queue (type, message_code, track_id, barcode, received_at) VALUES ('VERIFY', 212, ?, '', 'T')`)
        .run(track);
    insert('OP1');
    now = 99;
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull(); // not seen yet: within the memo's age
    now = 100;
    expect(trackOf(await s.dispatchers.sortation.take(0))).toBe('OP1');
    await expect(s.dispatchers.sortation.take(0)).resolves.toBeNull();
    // A waiting GET: the change watcher's notify() makes the next head read the table.
    const waiting = s.dispatchers.sortation.take(5000);
    insert('OP2');
    s.dispatchers.sortation.notify();
    expect(trackOf(await waiting)).toBe('OP2');
    s.ctx.dispose();
  });

  it('a dead letter sent back to its queue is handed out at once', async () => {
    const s = held(60_000);
    const dispatcher = new QueueDispatcher('sortation', s.store, { maxDeliveries: 1 });
    s.deps.dispatchers.sortation = dispatcher;
    const accepted = s.arrive('X');
    await new Promise((r) => setImmediate(r));
    await s.commitNext();
    await accepted;
    (await dispatcher.take(0))!.release(true); // handed out once without proof: a dead letter
    await new Promise((r) => setImmediate(r));
    expect(dispatcher.deadLettered).toBe(1);
    await expect(dispatcher.take(0)).resolves.toBeNull();
    const [moved] = atLeast(1, s.deadLetters.requeueDeadLetters(null));
    dispatcher.requeued(moved.messageId, moved.attempts); // what POST /dead-letters/requeue does
    expect(trackOf(await dispatcher.take(0))).toBe('X');
    s.ctx.dispose();
  });

  it('hands out exactly what reading the table at every take would, in any interleaving of arrivals, commits, takes, deliveries, give-backs and rows of another process (property, the table read every time as the oracle)', async () => {
    type Op =
      | { k: 'arrive'; prompt: boolean }
      | { k: 'commit' }
      | { k: 'take' }
      | { k: 'deliver'; i: number }
      | { k: 'release'; i: number; read: boolean }
      | { k: 'external' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ k: fc.constant('arrive' as const), prompt: fc.boolean() }),
      fc.constant({ k: 'commit' as const }),
      fc.constant({ k: 'take' as const }),
      fc.record({ k: fc.constant('deliver' as const), i: fc.nat(5) }),
      fc.record({ k: fc.constant('release' as const), i: fc.nat(5), read: fc.boolean() }),
      fc.constant({ k: 'external' as const }),
    );
    /** What the clients were handed, in order (null: nothing), after `ops` and a final drain. */
    async function run(memoMs: number, ops: Op[]): Promise<Array<string | null>> {
      const s = held(memoMs);
      const handed: Array<string | null> = [];
      const claims: Array<NonNullable<Awaited<ReturnType<typeof s.dispatchers.sortation.take>>>> = [];
      const settled = new Set<number>();
      const turn = () => new Promise((r) => setImmediate(r));
      let n = 0;
      for (const o of ops) {
        if (o.k === 'arrive') {
          s.deps.storage.prompt = () => o.prompt;
          void s.arrive(`T${++n}`).then((r) => settled.add((r as { body: { Id: number } }).body.Id));
        } else if (o.k === 'commit' && s.pending() > 0) await s.commitNext();
        else if (o.k === 'take') {
          const claim = await s.dispatchers.sortation.take(0);
          handed.push(trackOf(claim));
          if (claim) claims.push(claim);
        } else if ((o.k === 'deliver' || o.k === 'release') && claims.length > 0) {
          const i = o.i % claims.length;
          // The writer removes a message only after its own commit (it keeps the order of writes).
          if (o.k === 'deliver' && !settled.has(nth(claims, i).stored.id)) continue;
          const [claim] = atLeast(1, claims.splice(i, 1));
          if (o.k === 'deliver') await claim.commit(delivery);
          else claim.release(o.read);
        } else if (o.k === 'external') {
          // Under an id of its own (below ours, so ahead in the queue, as a dead letter sent back is): ids are not the point here.
          s.ctx.db
            .prepare(
              `INSERT INTO sortation_queue (id, type, message_code, track_id, barcode, received_at) VALUES (?, 'VERIFY', 212, ?, '', 'T')`,
            )
            .run(-++n, `OP${n}`);
          s.dispatchers.sortation.notify(); // the change watcher
        }
        await turn();
      }
      while (s.pending() > 0) await s.commitNext();
      for (const claim of claims.splice(0)) claim.release();
      for (let claim = await s.dispatchers.sortation.take(0); claim; claim = await s.dispatchers.sortation.take(0))
        handed.push(trackOf(claim));
      s.ctx.dispose();
      return handed;
    }
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        expect(await run(60_000, ops)).toEqual(await run(0, ops));
      }),
      { numRuns: 60 },
    );
    // 60 runs of up to 40 steps on real SQLite files: about 2 s here, more on a loaded machine.
  }, 30_000);
});
