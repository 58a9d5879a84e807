// The peer's half of the telegram session, driven through the session with frames and a fake
// clock: its epoch, the numbering of its telegrams, repeats, deliveries and their answers.
import { RefuseError } from '../../../lib/link/session-port';
import { NakReason, encodeData, parseNak } from '../../../bench/v1-codec';
import { connectedHost, flush, host, sorterToHost, verify } from '../../helpers/session-host';
import { nth } from '../../helpers/nth';

describe('InboundNumbering (through TelegramSession)', () => {
  it('acknowledges a data telegram only once delivered, a repeat again without delivering it twice, never before its delivery', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.after])).toEqual([[1, 0]]);
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // a repeat while the commit is in flight
    await flush();
    expect(h.take()).toEqual([]);
    nth(h.delivered, 0).settle(true);
    await flush();
    expect(h.take()).toEqual(['VERIA1']);
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // a repeat after it: ACK again, deliver nothing
    expect(h.take()).toEqual(['VERIA1']);
    expect(h.delivered).toHaveLength(1);
    expect(h.session.counters.duplicatesReceived).toBe(2);
  });

  it('hands the port each telegram with when its bytes arrived, as the link gave it', () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify), 1234.5);
    h.session.receive(h.plc(2, 'VERI', 'D', verify), 1240.25);
    expect(h.delivered.map((d) => [d.seq, d.arrivedAt])).toEqual([
      [1, 1234.5],
      [2, 1240.25],
    ]);
  });

  it('marks as resent what the sorter sends before its first SYNE since the start, and the resend of a number refused with 04', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // unacknowledged when an earlier run stopped: it may have handed it out
    nth(h.delivered, 0).settle(true);
    await flush();
    h.session.receive(h.plc(0, 'SYNE', 'D'));
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    nth(h.delivered, 1).settle(false); // not stored: NAK 04, its message may have been handed out
    await flush();
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    nth(h.delivered, 2).settle(true);
    await flush();
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    // A later connection: what comes before its SYNE was sent to this run, which kept it or is keeping it.
    h.connect();
    h.session.receive(h.plc(4, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.resent])).toEqual([
      [1, true],
      [2, false],
      [2, true],
      [3, false],
      [4, false],
    ]);
  });

  it('after a clean stop of the run before, what the sorter resends before its first SYNE is not marked (that run committed all it handed out)', () => {
    const h = host([], { epoch: null, lastSeqIn: 0, lastStopClean: true });
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.resent])).toEqual([[1, false]]);
  });

  it('NAKs with 04 when the delivery fails, and takes the resend as new (numbering back to the last kept)', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    nth(h.delivered, 0).settle(false);
    await flush();
    const nak = nth(h.wire.splice(0), 0);
    expect([nak.flag, nak.seq, parseNak(nak.data).code]).toEqual(['N', 1, 4]);
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.after])).toEqual([
      [1, 0],
      [1, 0],
    ]);
  });

  it('after a telegram it could not keep, takes only the next number in order: a later one is refused (04) until the gap is filled', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    nth(h.delivered, 0).settle(true);
    await flush();
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    nth(h.delivered, 1).settle(false); // the disk is full: 2 is refused with 04, and the sorter keeps it
    await flush();
    h.take();
    // The sorter goes on with new telegrams before its ACK timeout resends 2. Keeping 3 now would
    // make 2 look like a repeat of something kept: acknowledged, never stored.
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    await flush();
    const nak = nth(h.wire.splice(0), 0);
    expect([nak.flag, nak.seq, parseNak(nak.data).code]).toEqual(['N', 3, 4]);
    expect(h.delivered).toHaveLength(2);
    // The resend, in order: 2 and then 3 are delivered and acknowledged, each once.
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    expect(h.delivered.slice(2).map((d) => [d.seq, d.after])).toEqual([
      [2, 1],
      [3, 2],
    ]);
    nth(h.delivered, 2).settle(true);
    nth(h.delivered, 3).settle(true);
    await flush();
    expect(h.take()).toEqual(['VERIA2', 'VERIA3']);
    // Back to normal: a gap is taken as new again.
    h.session.receive(h.plc(5, 'VERI', 'D', verify));
    expect(h.delivered.at(-1)).toMatchObject({ seq: 5, after: 3 });
  });

  it('a failure of a delivery from before the resend does not roll the numbering back again', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    h.session.receive(h.plc(2, 'VERI', 'D', verify)); // in flight behind 1
    nth(h.delivered, 0).settle(false); // 1 fails: back to 0, NAK 04
    await flush();
    h.session.receive(h.plc(1, 'VERI', 'D', verify)); // the sorter resends 1 and 2, in order
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    expect(h.delivered.slice(2).map((d) => [d.seq, d.after])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    nth(h.delivered, 1).settle(false); // now the first 2 fails (it came after the failed 1): stale
    await flush();
    nth(h.delivered, 2).settle(true);
    nth(h.delivered, 3).settle(true);
    await flush();
    h.take();
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    expect(h.delivered.at(-1)).toMatchObject({ seq: 3, after: 2 }); // numbered after what was kept, not after a rollback
  });

  it('counts a number refused for good as handled: after a NAK 02 and then a NAK 04, it takes the resend, not waiting for the refused number', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    nth(h.delivered, 0).settle(true);
    await flush();
    h.session.receive(h.plc(2, 'VERI', 'D', verify));
    nth(h.delivered, 1).settle(new RefuseError(NakReason.BAD_DATA, 'unknown destination')); // the sorter drops 2
    await flush();
    h.session.receive(h.plc(3, 'VERI', 'D', verify));
    nth(h.delivered, 2).settle(false); // the disk is full: the sorter keeps 3 for its resend
    await flush();
    h.session.receive(h.plc(4, 'VERI', 'D', verify)); // sent before the resend of 3: not yet
    await flush();
    expect(h.wire.splice(0).map((t) => [t.flag, t.seq, t.flag === 'N' ? parseNak(t.data).code : null])).toEqual([
      ['A', 1, null],
      ['N', 2, 2],
      ['N', 3, 4],
      ['N', 4, 4],
    ]);
    h.session.receive(h.plc(3, 'VERI', 'D', verify)); // the resend, in order
    h.session.receive(h.plc(4, 'VERI', 'D', verify));
    expect(h.delivered.slice(3).map((d) => [d.seq, d.after])).toEqual([
      [3, 1],
      [4, 3],
    ]);
    nth(h.delivered, 3).settle(true);
    nth(h.delivered, 4).settle(true);
    await flush();
    expect(h.take()).toEqual(['VERIA3', 'VERIA4']);
  });

  it('sorter to host, one telegram at a time: a bad field (02), then a full disk (04), and the link goes on; each kept once, in order', async () => {
    const p = sorterToHost((seq, attempt) => (seq === 2 ? 'bad field' : seq === 3 && attempt === 1 ? 'disk full' : 'keep'));
    await p.settle();
    for (let i = 0; i < 4; i++) {
      p.send();
      await p.settle();
    }
    for (let i = 0; i < 3; i++) {
      p.resend();
      await p.settle();
    }
    p.send();
    await p.settle();
    expect(p.kept).toEqual([1, 3, 4, 5]);
    expect(p.refused).toEqual(['2:2']);
    expect(p.acked).toEqual([1, 3, 4, 5]);
    expect(p.sorter.inFlight).toBe(0);
  });

  it('sorter to host, telegrams in flight together: one refused when its delivery settles, those behind it fail and come again, a new one waits its turn; each kept once, in order', async () => {
    const p = sorterToHost((seq) => (seq === 2 ? 'no function' : 'keep'));
    await p.settle();
    for (let i = 0; i < 5; i++) p.send();
    await p.settle(); // 1 kept, 2 refused for good (03), 3 to 5 were numbered after 2: NAK 04
    expect([p.kept, p.refused, p.acked]).toEqual([[1], ['2:3'], [1]]);
    p.send(); // 6, before the sorter's ACK timeout resends 3 to 5
    await p.settle();
    for (let i = 0; i < 3; i++) {
      p.resend();
      await p.settle();
    }
    expect(p.kept).toEqual([1, 3, 4, 5, 6]);
    expect(p.acked).toEqual([1, 3, 4, 5, 6]);
    expect(p.sorter.inFlight).toBe(0);
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
});
