// The peer's half of the telegram session, driven through the session with frames and a fake
// clock: its epoch, the numbering of its telegrams, repeats, deliveries and their answers.
import { encodeData, parseNak } from '../../../lib/telegram/codec';
import { connectedHost, flush, host, verify } from '../../helpers/session-host';

describe('InboundNumbering (through TelegramSession)', () => {
  it('acknowledges a data telegram only once delivered, a repeat again without delivering it twice, never before its delivery', async () => {
    const h = connectedHost();
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
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    h.delivered[0].settle(false);
    await flush();
    const [nak] = h.wire.splice(0);
    expect([nak.flag, nak.seq, parseNak(nak.data).code]).toEqual(['N', 1, 4]);
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    expect(h.delivered.map((d) => [d.seq, d.after])).toEqual([[1, 0], [1, 0]]);
  });

  it('after a telegram it could not keep, takes only the next number in order: a later one is refused (04) until the gap is filled', async () => {
    const h = connectedHost();
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
    const h = connectedHost();
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
