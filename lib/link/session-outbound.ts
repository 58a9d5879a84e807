// Our half of a telegram session: the handshake that opens each connection (SYNS, the backlog,
// SYNE), the window of data telegrams in flight, their resend after the ACK timeout, and the
// peer's ACK or NAK of each.
import type { Telegram, TelegramType } from '../telegram/telegram';
import type { TelegramWire } from '../layout/wire';
import type { Outbound, SessionPort, SessionSettings } from './session-port';

/** What the outbound half needs of its session: a telegram out, and whether a connection is up. */
export interface OutboundLine {
  send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void;
  /** A connection is up. */
  connected(): boolean;
}

interface InFlight<R> {
  item: Outbound<R>;
  sentAt: number;
}

/** The data telegrams we send, from the handshake of a connection to the peer's answer to each. */
export class OutboundWindow<R> {
  private readonly inflight = new Map<number, InFlight<R>>();
  private resyncing = false;

  constructor(
    private readonly settings: SessionSettings,
    private readonly port: SessionPort<R>,
    private readonly wire: TelegramWire,
    private readonly line: OutboundLine,
    private readonly clock: () => number,
  ) {}

  /** Data telegrams sent and not yet acknowledged. */
  get size(): number {
    return this.inflight.size;
  }

  /** When the oldest telegram in flight is due to go again (ms, the session's clock; Infinity: none in flight). */
  resendAt(): number {
    const [oldest] = this.inflight.values();
    return oldest ? oldest.sentAt + this.settings.ackTimeoutMs + 1 : Infinity;
  }

  /** The handle of the data telegram in flight with this number, if any. */
  ref(seq: number): R | undefined {
    return this.inflight.get(seq)?.item.ref;
  }

  /** A connection is up: everything unacknowledged goes again, after a SYNS where the layout resynchronises. */
  open(): void {
    this.inflight.clear();
    const { epoch, nextSeq } = this.port.restart();
    this.resyncing = this.wire.resync;
    if (this.wire.resync)
      this.line.send('SYNS', this.wire.layout.sequence.control, 'D', this.wire.encodeData('SYNS', { Epoch: epoch, NextSeq: nextSeq }));
  }

  /** The connection is gone: what was in flight goes again after the next open. */
  close(): void {
    this.inflight.clear();
  }

  /** Send what the window allows, and SYNE once the backlog is out. `thorough`: let the port look beyond what it was told of. */
  pump(thorough = false): void {
    if (!this.line.connected()) return;
    const nowMs = this.clock();
    while (this.inflight.size < this.settings.window) {
      const items = this.port.nextOutbound(this.settings.window - this.inflight.size, thorough);
      thorough = false;
      if (items.length === 0) break;
      for (const item of items) {
        this.line.send(item.type, item.seq, 'D', item.data);
        // Unacknowledged by the layout: written is done.
        if (this.wire.acks) this.inflight.set(item.seq, { item, sentAt: nowMs });
        else this.port.acknowledged(item.ref);
      }
    }
    if (this.resyncing && this.port.backlogSent()) {
      this.resyncing = false;
      this.line.send('SYNE', this.wire.layout.sequence.control, 'D', '');
    }
  }

  /**
   * Once the oldest has waited the ACK timeout, everything unacknowledged goes again under its
   * number (unless the port no longer wants it). Returns how many went again.
   */
  resendDue(nowMs: number): number {
    const [oldest] = this.inflight.values();
    if (!oldest || nowMs - oldest.sentAt <= this.settings.ackTimeoutMs) return 0;
    let resent = 0;
    for (const [seq, flight] of [...this.inflight]) {
      if (this.port.stillWanted && !this.port.stillWanted(flight.item.ref)) {
        this.inflight.delete(seq);
        continue;
      }
      this.line.send(flight.item.type, seq, 'D', flight.item.data);
      flight.sentAt = nowMs;
      resent += 1;
    }
    return resent;
  }

  /** The peer's ACK of one of ours: it leaves the window, and the next may go. */
  acknowledged(t: Telegram): void {
    const flight = this.inflight.get(t.seq);
    if (!flight || (this.wire.ackEchoesType && flight.item.type !== t.type)) return; // a late ACK for something already acknowledged
    this.inflight.delete(t.seq);
    this.port.acknowledged(flight.item.ref);
    this.pump();
  }

  /** The peer's NAK of one of ours: refused for good, except 04 (cannot store now), which the resend answers. */
  refused(t: Telegram, code: number, text: string): void {
    const flight = this.inflight.get(t.seq);
    if (!flight || (this.wire.ackEchoesType && flight.item.type !== t.type) || code === this.wire.codes.CannotStore) return; // resent after the ACK timeout
    this.inflight.delete(t.seq);
    this.port.refused(flight.item.ref, { code, text });
    this.pump();
  }
}
