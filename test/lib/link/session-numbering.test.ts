// The numbering rules per Resync mode, as properties: a sorter's session and a host's back to back
// in memory, the host keeping REQUESTs in a store that checks numbers as db/link-store.ts does,
// through any mix of sends, lost connections, restarts of the service (a new session from what was
// stored), restarts of the sorter (numbering back to 1), full disks and wraps past Sequence.Last.
// Nothing the sorter sent is ever lost; without restarts nothing is kept twice.
import path from 'node:path';
import fc from 'fast-check';
import { lastingFailure } from '../../../db/lasting-failure';
import { TelegramSession } from '../../../lib/link/session';
import { HOST_RECEIVES, type Outbound, PLC_RECEIVES } from '../../../lib/link/session-port';
import { loadLayout } from '../../../lib/layout/load';
import { TelegramWire } from '../../../lib/layout/wire';
import { nth } from '../../helpers/nth';

const LAYOUTS = path.resolve(__dirname, '../../../layouts');
const flush = () => new Promise((r) => setImmediate(r));
const timing = { heartbeatMs: 1000, ackTimeoutMs: 200, window: 4 };

/** A shipped layout with few sequence numbers, so that a run wraps past Sequence.Last; `resync` false: as if it said "Resync": "none". */
function wireOf(name: string, last: number, resync?: false): TelegramWire {
  const layout = loadLayout(path.join(LAYOUTS, `${name}.json`));
  return new TelegramWire({ ...layout, sequence: { ...layout.sequence, last }, resync: resync ?? layout.resync });
}

const request = (wire: TelegramWire, item: number) =>
  wire.sorterMessageData({
    Type: 'REQUEST',
    TrackID: `I${item}`,
    Barcode: '',
    MessageCode: 210,
    InductLocation: 'IND1',
    RecirculationCount: 0,
    Length: 0,
    Width: 0,
    Height: 0,
    Weight: 0,
  }).data;

/**
 * The service's store: the peer's session and last number (one row of link_state) and the items
 * kept, committed one after the other as the writer thread does; `full` refuses every commit.
 */
class Store {
  epoch: string | null = null;
  last = 0;
  readonly kept: string[] = [];
  full = false;
  /** An operator's edit of link_state behind the service's back. */
  schemaBroken = false;
  private chain: Promise<unknown> = Promise.resolve();

  accept(seq: number, after: number | null, item: string): Promise<void> {
    const commit = this.chain.then(() => {
      if (this.schemaBroken) throw new Error('acceptFromPeer failed: SQLITE_ERROR: no such table: sortation_queue');
      if (after !== null && this.last !== after)
        throw new Error(
          `acceptFromPeer failed: telegram ${seq} from PLC01 out of sequence: expected the last stored number to be ${after}, it is ${this.last}`,
        );
      if (this.full) throw new Error('acceptFromPeer failed: SQLITE_FULL: database or disk is full');
      this.last = seq;
      this.kept.push(item);
    });
    this.chain = commit.catch(() => undefined);
    return commit;
  }

  /** The peer's new session (SYNS), committed in order with the messages. */
  setSession(epoch: string, last: number): void {
    this.chain = this.chain.then(() => {
      this.epoch = epoch;
      this.last = last;
    });
  }

  /** Every commit handed to it has ended. */
  idle(): Promise<unknown> {
    return this.chain;
  }
}

/** The service's end: a session over the store, made again from what is stored at each restart. */
function service(wire: TelegramWire, store: Store, events: { refusing: Array<string | null>; naks: number[] }) {
  return new TelegramSession<string>(
    { name: 'WCS01', peerName: 'PLC01', receives: HOST_RECEIVES, peerKind: 'sorter' },
    wire.settings(timing),
    {
      restart: () => ({ epoch: 'HOSTEPOCH001', nextSeq: 0 }),
      nextOutbound: () => [],
      backlogSent: () => true,
      acknowledged: () => undefined,
      refused: () => undefined,
      deliver: (t, after) => store.accept(t.seq, after, (wire.sorterMessageOf(t) as { TrackID: string }).TrackID),
      peerSession: (epoch, last) => store.setSession(epoch, last),
      lastingFailure,
    },
    () => 0,
    { refusing: (reason) => events.refusing.push(reason), nakSent: (_seq, _type, code) => events.naks.push(code) },
    { epoch: store.epoch, lastSeqIn: store.last },
  );
}

/** The sorter's end: items to send, numbered 1 to Last; a restart numbers what it still holds from 1 again. */
class Sorter {
  session!: TelegramSession<number>;
  readonly pending: Array<Outbound<number> & { item: number }> = [];
  readonly acked = new Set<number>();
  readonly refused = new Set<number>();
  private next = 1;
  private sent = 0;
  private backlog = 0;
  private epochs = 0;
  now = 0;

  constructor(private readonly wire: TelegramWire) {
    this.restart();
  }

  /** A new item inducted: its REQUEST is numbered and sent if the window allows. */
  induct(item: number): void {
    this.pending.push({ seq: this.next, type: 'REQU', data: request(this.wire, item), ref: this.next, item });
    this.next = this.wire.nextSequence(this.next);
    this.session.pump();
  }

  /** The PLC restarts: a new session, its numbering from 1, what it had not had acknowledged still held. */
  restart(): void {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset before the first start()
    this.session?.detach();
    this.epochs += 1;
    this.next = 1;
    for (const p of this.pending) {
      p.seq = p.ref = this.next;
      this.next = this.wire.nextSequence(this.next);
    }
    const epoch = `PLCEPOCH${String(this.epochs).padStart(4, '0')}`;
    const settled = (seq: number, into: Set<number>) => {
      const i = this.pending.findIndex((p) => p.seq === seq);
      if (i < 0) return;
      into.add(nth(this.pending, i).item);
      this.pending.splice(i, 1);
      if (i < this.sent) this.sent -= 1;
      if (i < this.backlog) this.backlog -= 1;
    };
    this.session = new TelegramSession<number>(
      { name: 'PLC01', peerName: 'WCS01', receives: PLC_RECEIVES, peerKind: 'host' },
      this.wire.settings(timing),
      {
        restart: () => {
          this.sent = 0;
          this.backlog = this.pending.length;
          return { epoch, nextSeq: this.pending[0]?.seq ?? 0 };
        },
        nextOutbound: (max) => {
          const items = this.pending.slice(this.sent, this.sent + max);
          this.sent += items.length;
          return items;
        },
        backlogSent: () => this.sent >= this.backlog,
        acknowledged: (seq) => settled(seq, this.acked),
        refused: (seq) => settled(seq, this.refused),
        deliver: () => Promise.resolve(),
      },
      () => this.now,
    );
  }
}

/** Both ends over one connection at a time, the frames in transit lost when it drops. */
function link(wire: TelegramWire) {
  const store = new Store();
  const events = { refusing: [] as Array<string | null>, naks: [] as number[] };
  const sorter = new Sorter(wire);
  let host = service(wire, store, events);
  let toHost: string[] = [];
  let toSorter: string[] = [];
  let connection = 0;
  const connect = () => {
    const c = ++connection;
    host.attach((frame) => c === connection && toSorter.push(frame));
    sorter.session.attach((frame) => c === connection && toHost.push(frame));
  };
  const disconnect = () => {
    connection += 1;
    toHost = [];
    toSorter = [];
    host.detach();
    sorter.session.detach();
  };
  connect();
  return {
    store,
    sorter,
    events,
    /** Carry frames both ways and let commits settle, until nothing moves. */
    async settle() {
      for (let i = 0; i < 200 && (toHost.length > 0 || toSorter.length > 0 || i < 3); i++) {
        for (const f of toHost.splice(0)) host.receive(f);
        for (const f of toSorter.splice(0)) sorter.session.receive(f);
        await flush();
      }
    },
    /** Some of the frames in transit arrive, the others wait. */
    async carry(n: number) {
      for (const f of toHost.splice(0, n)) host.receive(f);
      for (const f of toSorter.splice(0, n)) sorter.session.receive(f);
      await flush();
    },
    /** The sorter's ACK timeout passes: what is unacknowledged goes again. */
    resend() {
      sorter.now += wire.settings(timing).ackTimeoutMs + 1; // the layout's ResendMs, where it has one
      sorter.session.tick();
    },
    reconnect() {
      disconnect();
      connect();
    },
    /** The service stops (cleanly or not: the store keeps what it committed) and starts again. */
    async restartService() {
      disconnect();
      await store.idle();
      host = service(wire, store, events);
      connect();
    },
    restartSorter() {
      disconnect();
      sorter.restart();
      connect();
    },
  };
}

type Step =
  | { kind: 'induct'; n: number }
  | { kind: 'carry'; n: number }
  | { kind: 'resend' | 'reconnect' | 'restartService' | 'restartSorter' | 'diskFull' | 'diskOk' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('induct' as const), n: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('carry' as const), n: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'resend' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reconnect' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restartService' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restartSorter' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'diskFull' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'diskOk' as const }) },
);

/** Run the steps, then let the link heal (disk back, ACK timeouts) until the sorter holds nothing. */
async function run(l: ReturnType<typeof link>, steps: Step[]): Promise<number> {
  let item = 0;
  for (const s of steps) {
    if (s.kind === 'induct') for (let i = 0; i < s.n; i++) l.sorter.induct(++item);
    else if (s.kind === 'carry') await l.carry(s.n);
    else if (s.kind === 'resend') l.resend();
    else if (s.kind === 'reconnect') l.reconnect();
    else if (s.kind === 'restartService') await l.restartService();
    else if (s.kind === 'restartSorter') l.restartSorter();
    else l.store.full = s.kind === 'diskFull';
  }
  l.store.full = false;
  for (let i = 0; i < 50 && l.sorter.pending.length > 0; i++) {
    await l.settle();
    l.resend();
  }
  await l.settle();
  return item;
}

const counts = (kept: string[]) => kept.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());

// acme-cb8 answers with flags in the header, s7-raw with ACK and NAK telegrams of their own,
// ewm-mfs one telegram at a time (the last two as if their Resync were none).
describe.each([
  ['none', 'acme-cb8', undefined],
  ['none', 's7-raw', false],
  ['none', 'ewm-mfs', false],
  ['SYNS', 'v1', undefined],
  ['SYNS', 's7-raw', undefined],
] as const)('numbering with Resync %s (layout %s, Sequence.Last 13)', (mode, layout, resync) => {
  const wire = wireOf(layout, 13, resync);
  it('layout under test resynchronises as named', () => expect(wire.resync).toBe(mode === 'SYNS'));

  it('every REQUEST is kept at least once and acknowledged, through lost connections, restarts of either side, full disks and wraps; nothing refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const l = link(wire);
        const items = await run(l, steps);
        expect(l.sorter.pending).toEqual([]);
        expect(l.sorter.refused.size).toBe(0);
        expect(l.events.refusing).toEqual([]);
        const kept = counts(l.store.kept);
        for (let i = 1; i <= items; i++) expect(kept.get(`I${i}`) ?? 0).toBeGreaterThanOrEqual(1);
        expect(l.sorter.acked.size).toBe(items);
      }),
      { numRuns: 150 },
    );
  });

  it('without a restart or a lost connection, every REQUEST is kept exactly once, across full disks and wraps', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          step.filter((s) => !['reconnect', 'restartService', 'restartSorter'].includes(s.kind)),
          { maxLength: 40 },
        ),
        async (steps) => {
          const l = link(wire);
          const items = await run(l, steps);
          expect([...counts(l.store.kept).values()].every((n) => n === 1)).toBe(true);
          expect(l.store.kept.length).toBe(items);
        },
      ),
      { numRuns: 100 },
    );
  });

  if (mode === 'SYNS') {
    it('across restarts of the service and lost connections (the sorter keeps its session), every REQUEST is kept exactly once', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            step.filter((s) => s.kind !== 'restartSorter'),
            { maxLength: 40 },
          ),
          async (steps) => {
            const l = link(wire);
            const items = await run(l, steps);
            expect(l.store.kept.length).toBe(items);
            expect(new Set(l.store.kept).size).toBe(items);
          },
        ),
        { numRuns: 100 },
      );
    });
  }
});

describe('numbering without resynchronisation: the cases of the field', () => {
  const wire = wireOf('acme-cb8', 99999);

  it('a fresh home: the first telegram is 1 and the store holds 0; taken as it comes', async () => {
    const l = link(wire);
    l.sorter.induct(1);
    l.sorter.induct(2);
    await l.settle();
    expect([l.store.kept, l.store.last, [...l.sorter.acked]]).toEqual([['I1', 'I2'], 2, [1, 2]]);
  });

  it('the sorter restarts (numbering back to 1) and the service restarts, both mid-stream: nothing refused, nothing lost', async () => {
    const l = link(wire);
    for (let i = 1; i <= 5; i++) l.sorter.induct(i);
    await l.settle();
    l.restartSorter();
    for (let i = 6; i <= 8; i++) l.sorter.induct(i);
    await l.settle();
    expect(l.store.last).toBe(3);
    await l.restartService();
    for (let i = 9; i <= 10; i++) l.sorter.induct(i);
    await l.settle();
    expect(l.store.kept).toEqual(['I1', 'I2', 'I3', 'I4', 'I5', 'I6', 'I7', 'I8', 'I9', 'I10']);
    expect(l.events.naks).toEqual([]);
  });

  it("a store whose number was changed behind the session's back is a lasting failure: said once, refused with Unexpected (103), not CannotStore; a reconnect takes the numbering up again", async () => {
    const l = link(wire);
    l.sorter.induct(1);
    await l.settle();
    l.store.last = 500; // an operator's edit, a restored backup
    l.sorter.induct(2);
    l.sorter.induct(3);
    await l.settle();
    // 3 was numbered behind 2 and fails behind it (send again); its resend meets the same store.
    l.resend();
    await l.settle();
    expect(l.events.naks).toEqual([103, 201, 103]);
    expect(l.events.refusing).toHaveLength(1);
    expect(l.events.refusing[0]).toMatch(/out of sequence/);
    expect([...l.sorter.refused]).toEqual([2, 3]);
    l.reconnect();
    l.sorter.induct(4);
    await l.settle();
    expect(l.store.kept).toEqual(['I1', 'I4']);
    expect(l.events.refusing).toEqual([expect.stringMatching(/out of sequence/), null]);
  });

  it('a schema error is a lasting failure: refused with BadData (102) at once, said once', async () => {
    const l = link(wire);
    l.store.schemaBroken = true;
    l.sorter.induct(1);
    l.sorter.induct(2);
    await l.settle();
    expect(l.events.naks.every((c) => c === 102)).toBe(true);
    expect(l.events.refusing).toEqual([expect.stringMatching(/SQLITE_ERROR: no such table/)]);
    expect([...l.sorter.refused]).toEqual([1, 2]);
  });

  it('a full disk is no lasting failure: CannotStore (201) until it passes, then everything is kept once', async () => {
    const l = link(wire);
    l.store.full = true;
    l.sorter.induct(1);
    l.sorter.induct(2);
    await l.settle();
    expect(new Set(l.events.naks)).toEqual(new Set([201]));
    l.store.full = false;
    for (let i = 0; i < 3; i++) {
      l.resend();
      await l.settle();
    }
    expect(l.store.kept).toEqual(['I1', 'I2']);
    expect(l.events.refusing).toEqual([]);
  });
});
