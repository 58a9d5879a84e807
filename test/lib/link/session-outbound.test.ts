// Our half of the telegram session, driven through the session with frames and a fake clock: the
// handshake at each connection, the window, resends, and the peer's ACK or NAK of ours.
import { nakData } from '../../../bench/v1-codec';
import { connectedHost, host } from '../../helpers/session-host';

describe('OutboundWindow (through TelegramSession)', () => {
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
    const h = connectedHost([{ seq: 7, type: 'ASGN', data: 'x', ref: 'e7' }]);
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

  it('drops an outbound telegram the peer refuses for good, keeps one refused with 04 for the resend', () => {
    const h = host([1, 2].map((seq) => ({ seq, type: 'DSET' as const, data: 'x', ref: `e${seq}` })));
    h.connect();
    h.take();
    h.session.receive(h.plc(1, 'DSET', 'N', nakData(2, 'unknown destination')));
    h.session.receive(h.plc(2, 'DSET', 'N', nakData(4, 'busy')));
    expect(h.refused).toEqual(['e1:2']);
    expect(h.session.inFlight).toBe(1);
  });
});
