// The telegram session engine both ends run, driven with frames and a fake clock: no sockets.
import { TelegramSession } from '../../../lib/link/session';
import { HOST_RECEIVES, type Outbound, PLC_RECEIVES, RefuseError } from '../../../lib/link/session-port';
import { type Telegram, type TelegramType, encodeData, encodeFrame, nakData, parseContent, parseNak } from '../../../lib/telegram/codec';

const settings = { heartbeatMs: 1000, ackTimeoutMs: 200, window: 2 };
const from = (peer: string, me: string) => (seq: number, type: TelegramType, flag: Telegram['flag'], data = '') => encodeFrame({ sender: peer, receiver: me, seq, type, flag, data });
const verify = encodeData('VERI', { MessageCode: 212, TrackID: '0004711', Barcode: '', Destination: 'D1' });

/** A host-side session with an in-memory outbox of `outbound` items and a deliver the test controls. */
function host(outbound: Outbound<string>[] = [], peer = { epoch: null as string | null, lastSeqIn: 0 }) {
  let now = 1_000;
  const wire: Telegram[] = [];
  const delivered: Array<{ seq: number; after: number; settle(ok: boolean | Error): void }> = [];
  const acked: string[] = [];
  const refused: string[] = [];
  const sessions: Array<[string, number]> = [];
  let sent = 0;
  let backlog = 0;
  const session = new TelegramSession<string>(
    { name: 'WCS01', peerName: 'PLC01', receives: HOST_RECEIVES, peerKind: 'sorter' },
    settings,
    {
      restart: () => {
        sent = 0;
        backlog = outbound.length;
        return { epoch: 'HOSTEPOCH001', nextSeq: outbound[0]?.seq ?? 0 };
      },
      nextOutbound: (max) => {
        const items = outbound.slice(sent, sent + max);
        sent += items.length;
        return items;
      },
      backlogSent: () => sent >= backlog,
      acknowledged: (ref) => acked.push(ref),
      refused: (ref, r) => refused.push(`${ref}:${r.code}`),
      deliver: (t, after) =>
        new Promise<void>((resolve, reject) => delivered.push({ seq: t.seq, after, settle: (ok) => (ok === true ? resolve() : reject(ok === false ? new Error('disk') : ok)) })),
      peerSession: (epoch, last) => sessions.push([epoch, last]),
    },
    () => now,
    {},
    peer,
  );
  const plc = from('PLC01', 'WCS01');
  return {
    session,
    wire,
    delivered,
    acked,
    refused,
    sessions,
    plc,
    advance: (ms: number) => (now += ms),
    connect: () => session.attach((frame) => wire.push(parseContent(frame.slice(1, -1)))),
    take: () => wire.splice(0).map((t) => `${t.type}${t.flag}${t.seq}`),
  };
}
const flush = () => new Promise((r) => setImmediate(r));

describe('TelegramSession', () => {
  it('resynchronises at attach: SYNS with our epoch and oldest number, the backlog within the window, SYNE once the backlog is out', () => {
    const items = [1, 2, 3].map((seq) => ({ seq, type: 'ASGN' as const, data: 'x', ref: `e${seq}` }));
    const h = host(items);
    h.connect();
    expect(h.take()).toEqual(['SYNSD0', 'ASGND1', 'ASGND2']); // window 2: no SYNE yet
    h.session.receive(h.plc(1, 'ASGN', 'A'));
    expect(h.acked).toEqual(['e1']);
    expect(h.take()).toEqual(['ASGND3', 'SYNED0']);
  });

  it('resends everything unacknowledged after the ACK timeout, with the same numbers, and again after a reconnect', () => {
    const h = host([{ seq: 7, type: 'ASGN', data: 'x', ref: 'e7' }]);
    h.connect();
    h.take();
    h.advance(150);
    h.session.tick();
    expect(h.take()).toEqual([]);
    h.advance(100);
    h.session.tick();
    expect(h.take()).toEqual(['ASGND7']);
    expect(h.session.counters.resends).toBe(1);
    h.session.detach();
    h.connect();
    expect(h.take()).toEqual(['SYNSD0', 'ASGND7', 'SYNED0']);
  });

  it('acknowledges a data telegram only once delivered, a repeat again without delivering it twice, never before its delivery', async () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.after])).toEqual([[1, 0]]);
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // a repeat while the commit is in flight
    await flush();
    expect(h.take()).toEqual([]);
    h.delivered[0].settle(true);
    await flush();
    expect(h.take()).toEqual(['VERIA1']);
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // a repeat after it: ACK again, deliver nothing
    expect(h.take()).toEqual(['VERIA1']);
    expect(h.delivered).toHaveLength(1);
    expect(h.session.counters.duplicatesReceived).toBe(2);
  });

  it('NAKs with 04 when the delivery fails, and takes the resend as new (numbering back to the last kept)', async () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    h.delivered[0].settle(false);
    await flush();
    const [nak] = h.wire.splice(0);
    expect([nak.flag, nak.seq, parseNak(nak.data).code]).toEqual(['N', 1, 4]);
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.after])).toEqual([[1, 0], [1, 0]]);
  });

  it('after a telegram it could not keep, takes only the next number in order: a later one is refused (04) until the gap is filled', async () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    h.delivered[0].settle(true);
    await flush();
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    h.delivered[1].settle(false); // the disk is full: 2 is refused with 04, and the sorter keeps it
    await flush();
    h.take();
    // The sorter goes on with new telegrams before its ACK timeout resends 2. Keeping 3 now would
    // make 2 look like a repeat of something kept: acknowledged, never stored.
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    await flush();
    const [nak] = h.wire.splice(0);
    expect([nak.flag, nak.seq, parseNak(nak.data).code]).toEqual(['N', 3, 4]);
    expect(h.delivered).toHaveLength(2);
    // The resend, in order: 2 and then 3 are delivered and acknowledged, each once.
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    expect(h.delivered.slice(2).map((d) => [d.seq, d.after])).toEqual([[2, 1], [3, 2]]);
    h.delivered[2].settle(true);
    h.delivered[3].settle(true);
    await flush();
    expect(h.take()).toEqual(['VERIA2', 'VERIA3']);
    // Back to normal: a gap is taken as new again.
    h.session.receive(h.plc(5, 'VERI', 'D', verify));
    expect(h.delivered.at(-1)).toMatchObject({ seq: 5, after: 3 });
  });

  it('a failure of a delivery from before the resend does not roll the numbering back again', async () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    h.session.receive(h.plc(2, 'VERI', 'D', verify)); // in flight behind 1
    h.delivered[0].settle(false); // 1 fails: back to 0, NAK 04
    await flush();
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // the sorter resends 1 and 2, in order
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    expect(h.delivered.slice(2).map((d) => [d.seq, d.after])).toEqual([[1, 0], [2, 1]]);
    h.delivered[1].settle(false); // now the first 2 fails (it came after the failed 1): stale
    await flush();
    h.delivered[2].settle(true);
    h.delivered[3].settle(true);
    await flush();
    h.take();
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    expect(h.delivered.at(-1)).toMatchObject({ seq: 3, after: 2 }); // numbered after what was kept, not after a rollback
  });

  it('refuses with the code the side gives, with 02 for data that does not decode, with 03 for a type the peer does not send, with 01 for a bad header', async () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    h.delivered[0].settle(new RefuseError(2, 'unknown destination'));
    await flush();
    h.session.receive(h.plc(3, 'ASGN', 'D', 'x'));
    h.session.receive('\x020027PLC01 WCS01 00000XLIFED\x03');
    const codes = h.wire.splice(0).map((t) => `${t.type}${t.flag}${t.seq}:${parseNak(t.data).code}`);
    expect(codes).toEqual(['VERIN1:2', 'ASGNN3:3', 'LIFEN0:1']);
  });

  it('starts a new numbering when the peer announces a new epoch, and keeps it for the same epoch', () => {
    const h = host([], { epoch: 'OLD', lastSeqIn: 500 });
    h.connect();
    h.session.receive(h.plc(0, 'SYNS', 'D', encodeData('SYNS', { Epoch: 'OLD', NextSeq: 3 })));
    expect(h.sessions).toEqual([]);
    h.session.receive(h.plc(0, 'SYNS', 'D', encodeData('SYNS', { Epoch: 'NEWEPOCH0001', NextSeq: 40 })));
    expect(h.sessions).toEqual([['NEWEPOCH0001', 39]]);
    h.session.receive(h.plc(40, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.after])).toEqual([[40, 39]]);
  });

  it('drops an outbound telegram the peer refuses for good, keeps one refused with 04 for the resend', () => {
    const h = host([1, 2].map((seq) => ({ seq, type: 'DSET' as const, data: 'x', ref: `e${seq}` })));
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'DSET', 'N', nakData(2, 'unknown destination')));
    h.session.receive(h.plc(2, 'DSET', 'N', nakData(4, 'busy')));
    expect(h.refused).toEqual(['e1:2']);
    expect(h.session.inFlight).toBe(1);
  });

  it('answers LIFE, sends LIFE after a heartbeat of silence, and says dead after three heartbeats without bytes', () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(h.plc(0, 'LIFE', 'D'));
    expect(h.take()).toEqual(['LIFEA0']);
    h.advance(1001);
    expect(h.session.tick()).toBeUndefined();
    expect(h.take()).toEqual(['LIFED0']);
    h.advance(2000);
    expect(h.session.tick()).toBe('dead');
  });

  it('counts garbage and resumes at the next frame', () => {
    const h = host();
    h.connect();
    h.take();
    h.session.receive(`junk${h.plc(0, 'LIFE', 'D')}`);
    expect(h.session.counters.garbageBytes).toBe(4);
    expect(h.take()).toEqual(['LIFEA0']);
  });

  it('as the PLC: takes ASGN and DSET, refuses REQU with 03', () => {
    const wire: Telegram[] = [];
    const plc = new TelegramSession<number>(
      { name: 'PLC01', peerName: 'WCS01', receives: PLC_RECEIVES, peerKind: 'host' },
      settings,
      { restart: () => ({ epoch: 'E', nextSeq: 0 }), nextOutbound: () => [], backlogSent: () => true, acknowledged: () => {}, refused: () => {}, deliver: async () => {} },
      () => 0,
    );
    plc.attach((frame) => wire.push(parseContent(frame.slice(1, -1))));
    const hostFrame = from('WCS01', 'PLC01');
    plc.receive(hostFrame(1, 'REQU', 'D', 'x'));
    expect(wire.map((t) => `${t.type}${t.flag}`)).toEqual(['SYNSD', 'SYNED', 'REQUN']);
    expect(parseNak(wire[2].data).text).toBe('REQU is not sent by a host');
  });
});
