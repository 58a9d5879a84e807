// The telegram session engine both ends run, driven with frames and a fake clock: no sockets.
// Its frames and timers here; our telegrams in session-outbound.test.ts, the peer's in
// session-inbound.test.ts.
import { TelegramSession } from '../../../lib/link/session';
import { PLC_RECEIVES, RefuseError } from '../../../lib/link/session-port';
import { type Telegram, parseContent, parseNak } from '../../../bench/v1-codec';
import { connectedHost, flush, from, host, settings, verify } from '../../helpers/session-host';
import { nth } from '../../helpers/nth';

describe('TelegramSession', () => {
  it('refuses with the code the side gives, with 02 for data that does not decode, with 03 for a type the peer does not send, with 01 for a bad header', async () => {
    const h = connectedHost();
    h.session.receive(h.plc(1, 'VERI', 'D', verify));
    nth(h.delivered, 0).settle(new RefuseError(2, 'unknown destination'));
    await flush();
    h.session.receive(h.plc(3, 'ASGN', 'D', 'x'));
    h.session.receive('\x020027PLC01 WCS01 00000XLIFED\x03');
    const codes = h.wire.splice(0).map((t) => `${t.type}${t.flag}${t.seq}:${parseNak(t.data).code}`);
    expect(codes).toEqual(['VERIN1:2', 'ASGNN3:3', 'LIFEN0:1']);
  });

  it('answers LIFE, sends LIFE after a heartbeat of silence, and says dead after three heartbeats without bytes', () => {
    const h = connectedHost();
    h.session.receive(h.plc(0, 'LIFE', 'D'));
    expect(h.take()).toEqual(['LIFEA0']);
    h.advance(1001);
    expect(h.session.tick()).toBeUndefined();
    expect(h.take()).toEqual(['LIFED0']);
    h.advance(2000);
    expect(h.session.tick()).toBe('dead');
  });

  it('says when a tick next has something to do: nothing before that moment, and at it the resend, the LIFE or the dead peer', () => {
    const h = host([{ seq: 7, type: 'ASGN', data: 'x', ref: 'e7' }]);
    expect(h.session.nextDueAt()).toBe(Infinity); // no connection: no timer
    h.connect();
    h.take();
    // ASGN 7 in flight since 1,000: its resend is the first thing due (ACK timeout 200).
    const now = () => h.advance(0);
    /** The clock moved to `ms` before the next deadline. */
    const dueAt = (ms: number) => h.advance(h.session.nextDueAt() - ms - now());
    expect(h.session.nextDueAt()).toBe(1_000 + settings.ackTimeoutMs + 1);
    dueAt(1);
    h.session.tick();
    expect(h.take()).toEqual([]);
    dueAt(0);
    h.session.tick();
    expect(h.take()).toEqual(['ASGND7']);
    h.session.receive(h.plc(7, 'ASGN', 'A'));
    // Nothing in flight: our LIFE after half to a whole heartbeat of silence from our side (the
    // resend at 1,201), on the clock's multiple of the heartbeat in that span: 2,000.
    expect(now()).toBe(1_201);
    expect(h.session.nextDueAt()).toBe(2_000);
    dueAt(1);
    h.session.tick();
    expect(h.take()).toEqual([]);
    dueAt(0);
    h.session.tick();
    expect(h.take()).toEqual(['LIFED0']);
    // Our LIFE goes again a heartbeat later, on the next multiple; the peer, silent since its ACK
    // at 1,201, is dead three heartbeats after it.
    expect(h.session.nextDueAt()).toBe(3_000);
    dueAt(0);
    expect(h.session.tick()).toBeUndefined();
    expect(h.take()).toEqual(['LIFED0']);
    dueAt(0);
    expect(h.session.tick()).toBeUndefined();
    expect(h.take()).toEqual(['LIFED0']);
    expect(h.session.nextDueAt()).toBe(1_201 + 3 * settings.heartbeatMs + 1);
    dueAt(1);
    expect(h.session.tick()).toBeUndefined();
    dueAt(0);
    expect(h.session.tick()).toBe('dead');
  });

  it("sends its LIFE after half to a whole heartbeat of silence, and settles on the clock's multiples of the heartbeat by the second one", () => {
    const h = connectedHost();
    const now = () => h.advance(0);
    const lifeTimes: number[] = [];
    /**
     * Our telegram at `at`, then the line quiet: when the next `lifes` LIFEs go (the peer answers
     * each at once), the tick running `lateMs` after each deadline (a timer, and what runs first).
     */
    const quietFrom = (at: number, lifes: number, lateMs = 0) => {
      h.advance(at - now());
      h.session.receive(h.plc(0, 'LIFE', 'D')); // we answer: our last telegram out is now
      h.take();
      lifeTimes.length = 0;
      while (lifeTimes.length < lifes) {
        h.advance(h.session.nextDueAt() - now() + lateMs);
        h.session.tick();
        if (h.take().includes('LIFED0')) {
          lifeTimes.push(now());
          h.session.receive(h.plc(0, 'LIFE', 'A'));
        }
      }
    };
    const hb = settings.heartbeatMs;
    // Quiet from 10,300: the first LIFE on the multiple 11,000, 700 ms later, then one a heartbeat.
    quietFrom(10_300, 3);
    expect(lifeTimes).toEqual([11_000, 12_000, 13_000]);
    // Quiet from 20,700: no multiple of the heartbeat between 500 and 1,000 ms later, so the first
    // goes after half a heartbeat (21,200), the second on the multiple 22,000.
    quietFrom(20_700, 3);
    expect(lifeTimes).toEqual([21_200, 22_000, 23_000]);
    // The same with each tick 3 ms late: each LIFE 3 ms after its multiple, never drifting off it.
    quietFrom(30_700, 4, 3);
    expect(lifeTimes).toEqual([31_203, 32_003, 33_003, 34_003]);
    // Never more than a heartbeat of silence (and the timer's lateness), never less than half of one.
    for (const [start, late] of [
      [40_001, 0],
      [50_499, 7],
      [60_500, 0],
      [70_501, 2],
      [80_999, 0],
      [90_999, 40],
    ] as const) {
      quietFrom(start, 4, late);
      const times = [start, ...lifeTimes];
      const gaps = lifeTimes.map((t, i) => t - times[i]!);
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(hb / 2);
        expect(gap).toBeLessThanOrEqual(hb + late);
      }
      // On the multiples (as late as the timer) by the second LIFE, or the third with a timer
      // that is late by a good part of the heartbeat.
      expect(lifeTimes[late < 20 ? 1 : 2]! % hb).toBe(late);
      expect(lifeTimes[3]! - lifeTimes[2]!).toBe(hb);
    }
  });

  it('counts garbage and resumes at the next frame', () => {
    const h = connectedHost();
    h.session.receive(`junk${h.plc(0, 'LIFE', 'D')}`);
    expect(h.session.counters.garbageBytes).toBe(4);
    expect(h.take()).toEqual(['LIFEA0']);
  });

  it('as the PLC: takes ASGN and DSET, refuses REQU with 03', () => {
    const wire: Telegram[] = [];
    const plc = new TelegramSession<number>(
      { name: 'PLC01', peerName: 'WCS01', receives: PLC_RECEIVES, peerKind: 'host' },
      settings,
      {
        restart: () => ({ epoch: 'E', nextSeq: 0 }),
        nextOutbound: () => [],
        backlogSent: () => true,
        acknowledged: () => {},
        refused: () => {},
        deliver: async () => {},
      },
      () => 0,
    );
    plc.attach((frame) => wire.push(parseContent(frame.slice(1, -1))));
    const hostFrame = from('WCS01', 'PLC01');
    plc.receive(hostFrame(1, 'REQU', 'D', 'x'));
    expect(wire.map((t) => `${t.type}${t.flag}`)).toEqual(['SYNSD', 'SYNED', 'REQUN']);
    expect(parseNak(nth(wire, 2).data).text).toBe('REQU is not sent by a host');
  });
});
