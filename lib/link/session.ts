// The telegram session engine both ends of the sorter link run (docs/sorter-protocol.md): no
// sockets and no storage, only the protocol. The service's link (lib/link/sorter-link.ts) and the
// emulator's PLC (emulator/plc-link.ts) wrap it in TCP and give it their side's port. This file
// keeps the frames and the timers; our telegrams are lib/link/session-outbound.ts, the peer's
// lib/link/session-inbound.ts.
import type { Role, SessionCounters, SessionEvents, SessionPort, SessionSettings } from './session-port';
import { NakReason, type Telegram, type TelegramType } from '../telegram/telegram';
import { type TelegramWire, defaultWire } from '../layout/wire';
import { InboundNumbering, type InboundLine } from './session-inbound';
import { OutboundWindow, type OutboundLine } from './session-outbound';
import { errorMessage } from '../process/errors';

/**
 * One end of a telegram session: framing through the wire of its layout (protocol version 1
 * unless the settings give another), numbering, the window, resend after
 * the ACK timeout, LIFE and the dead-peer rule (3 heartbeats), SYNS/SYNE resynchronisation,
 * repeat detection and the NAK rules. `attach` starts a connection's part with a `write`,
 * `receive` takes its bytes, `tick` runs the timers, `detach` ends it.
 */
export class TelegramSession<R> {
  readonly counters: SessionCounters = {
    telegramsIn: 0,
    telegramsOut: 0,
    resends: 0,
    naksSent: 0,
    naksReceived: 0,
    duplicatesReceived: 0,
    garbageBytes: 0,
  };
  /** When the last telegram came in and went out (ms, the session's clock; 0: never). */
  lastInAt = 0;
  lastOutAt = 0;
  private write: ((frame: string, t: Telegram) => void) | null = null;
  /** Counts connections, so that a commit finishing after a reconnect does not ACK on the new one. */
  private connection = 0;
  private readonly wire: TelegramWire;
  private decoder: ReturnType<TelegramWire['decoder']>;
  private lastBytesAt = 0;
  private readonly outbound: OutboundWindow<R>;
  private readonly inbound: InboundNumbering<R>;

  constructor(
    private readonly role: Role,
    private readonly settings: SessionSettings,
    port: SessionPort<R>,
    private readonly clock: () => number,
    private readonly events: SessionEvents = {},
    /** The peer's session as last stored (the host keeps it across restarts). */
    peer: { epoch: string | null; lastSeqIn: number; lastStopClean?: boolean } = { epoch: null, lastSeqIn: 0 },
  ) {
    this.wire = settings.wire ?? defaultWire();
    this.decoder = this.wire.decoder();
    const line: InboundLine & OutboundLine = {
      send: (type, seq, flag, data) => this.send(type, seq, flag, data),
      nak: (seq, type, reason, why, answered) => this.nak(seq, type, reason, why, answered),
      connected: () => this.connected,
      connection: () => this.connection,
    };
    this.outbound = new OutboundWindow(settings, port, this.wire, line, clock);
    this.inbound = new InboundNumbering(peer, this.wire, port, line, this.counters, events);
  }

  /** A connection is up (attached and not detached since). */
  get connected(): boolean {
    return this.write !== null;
  }

  /** Data telegrams sent and not yet acknowledged. */
  get inFlight(): number {
    return this.outbound.size;
  }

  /** The handle of the data telegram in flight with this number, if any. */
  inFlightRef(seq: number): R | undefined {
    return this.outbound.ref(seq);
  }

  /** A connection is up: resynchronise (SYNS, everything unacknowledged again, SYNE). */
  attach(write: (frame: string, t: Telegram) => void): void {
    this.write = write;
    this.connection += 1;
    this.decoder = this.wire.decoder();
    this.lastBytesAt = this.lastOutAt = this.clock();
    this.inbound.open();
    this.outbound.open();
    this.pump();
  }

  /** The connection is gone: what was in flight goes again after the next attach. */
  detach(): void {
    this.write = null;
    this.outbound.close();
  }

  /** Bytes from the connection, and when they arrived (performance.now(); now if not given). */
  receive(chunk: Buffer | string, arrivedAt = performance.now()): void {
    const now = this.clock();
    this.lastBytesAt = now;
    for (const item of this.decoder.push(chunk)) {
      if (item.kind === 'garbage') {
        this.counters.garbageBytes += item.bytes.length;
        this.events.garbage?.(item.bytes, item.reason);
        continue;
      }
      this.counters.telegramsIn += 1;
      this.lastInAt = now;
      this.events.telegram?.('IN', this.wire.readable(item.content, item.raw), now);
      this.onTelegram(item.content, arrivedAt, item.raw);
    }
  }

  /** Send what the window allows. `thorough`: let the port look beyond what it was told of. */
  pump(thorough = false): void {
    this.outbound.pump(thorough);
  }

  /**
   * When `tick` next has something to do (ms, the session's clock; Infinity: no connection): the
   * resend of the oldest telegram in flight, our LIFE after a heartbeat of silence, the dead-peer
   * rule. Each moves later with the traffic, so a timer armed for it finds at worst nothing due.
   */
  nextDueAt(): number {
    if (!this.write) return Infinity;
    const life = this.wire.life
      ? Math.min(this.lastOutAt + this.settings.heartbeatMs, this.lastBytesAt + 3 * this.settings.heartbeatMs) + 1
      : Infinity;
    return Math.min(life, this.outbound.resendAt());
  }

  /** The timers: dead peer, resend, heartbeat. Returns 'dead' when the connection must be dropped. */
  tick(): 'dead' | undefined {
    if (!this.write) return undefined;
    const nowMs = this.clock();
    if (this.wire.life && nowMs - this.lastBytesAt > 3 * this.settings.heartbeatMs) return 'dead';
    this.counters.resends += this.outbound.resendDue(nowMs);
    this.pump(true);
    if (this.wire.life && nowMs - this.lastOutAt > this.settings.heartbeatMs) this.send('LIFE', this.wire.layout.sequence.control, 'D', '');
    return undefined;
  }

  private send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string, code?: number): void {
    if (!this.write) return;
    const t: Telegram = { sender: this.role.name, receiver: this.role.peerName, seq, type, flag, data };
    const frame = this.wire.encodeFrame({ ...t, code });
    const now = this.clock();
    this.write(frame, t);
    this.events.telegram?.('OUT', this.wire.contentOf(frame), now);
    this.lastOutAt = now;
    this.counters.telegramsOut += 1;
  }

  /** Refuse a telegram: `reason` is one of NakReason's, or a port's own code; the layout's code goes out. */
  private nak(seq: number, type: TelegramType, reason: number, why: string, answered?: Telegram): void {
    const code = this.wire.nakCode(reason);
    this.counters.naksSent += 1;
    this.events.nakSent?.(seq, type, code, why);
    if (this.wire.acks) this.send(type, seq, 'N', this.wire.nakData(code, why, answered), code);
  }

  /** The peer refused one of ours: counted and told here, decided by the window. */
  private nakReceived(t: Telegram): void {
    this.counters.naksReceived += 1;
    const { code, text } = this.wire.parseNak(t);
    this.events.nakReceived?.(t.seq, t.type, code, text);
    this.outbound.refused(t, code, text);
  }

  private onTelegram(content: string, arrivedAt: number, raw?: Buffer): void {
    let t: Telegram;
    try {
      t = this.wire.parseContent(content, raw);
      t.arrivedAt = arrivedAt;
    } catch (err) {
      return this.nak(this.wire.sequenceOf(content), 'LIFE', NakReason.MALFORMED, errorMessage(err));
    }
    this.events.validTelegram?.(t);
    if (t.flag === 'A') return this.outbound.acknowledged(t);
    if (t.flag === 'N') return this.nakReceived(t);
    if (t.type === 'SYNE') this.inbound.syncEnd();
    if (t.type === 'LIFE' || t.type === 'SYNE') return this.send(t.type, t.seq, 'A', this.wire.ackData(t));
    if (t.type === 'SYNS') return this.inbound.syncStart(t);
    if (this.role.receives.includes(t.type)) return this.inbound.data(t);
    return this.nak(t.seq, t.type, NakReason.UNEXPECTED, `${t.type} is not sent by a ${this.role.peerKind}`, t);
  }
}
