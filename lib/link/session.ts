// The telegram session engine both ends of the sorter link run (docs/sorter-protocol.md): no
// sockets and no storage, only the protocol. The service's link (lib/link/sorter-link.ts) and the
// emulator's PLC (emulator/plc-link.ts) wrap it in TCP and give it their side's port.
import { RefuseError, type Role, type SessionCounters, type SessionEvents, type SessionPort, type SessionSettings, type Outbound, isRepeat } from './session-port';
import { NakReason, type Telegram, TelegramError, type TelegramType } from '../telegram/codec';
import { type TelegramWire, defaultWire } from '../telegram/wire';

interface InFlight<R> {
  item: Outbound<R>;
  sentAt: number;
}

/**
 * One end of a telegram session: framing through the wire of its layout (protocol version 1
 * unless the settings give another), numbering, the window, resend after
 * the ACK timeout, LIFE and the dead-peer rule (3 heartbeats), SYNS/SYNE resynchronisation,
 * repeat detection and the NAK rules. `attach` starts a connection's part with a `write`,
 * `receive` takes its bytes, `tick` runs the timers, `detach` ends it.
 */
export class TelegramSession<R> {
  readonly counters: SessionCounters = { telegramsIn: 0, telegramsOut: 0, resends: 0, naksSent: 0, naksReceived: 0, duplicatesReceived: 0, garbageBytes: 0 };
  /** When the last telegram came in and went out (ms, the session's clock; 0: never). */
  lastInAt = 0;
  lastOutAt = 0;
  private write: ((frame: string, t: Telegram) => void) | null = null;
  /** Counts connections, so that a commit finishing after a reconnect does not ACK on the new one. */
  private connection = 0;
  private readonly wire: TelegramWire;
  private decoder: ReturnType<TelegramWire['decoder']>;
  /** A layout without resynchronisation: the peer's numbering is taken as it comes after each connect. */
  private freshPeer = false;
  private readonly inflight = new Map<number, InFlight<R>>();
  private resyncing = false;
  private lastBytesAt = 0;
  private peerEpoch: string | null;
  /** Counts the peer's new sessions: a commit from an earlier one must not move today's numbers. */
  private peerGen = 0;
  /** Last number accepted, counting those whose delivery is still under way. */
  private lastSeqIn: number;
  /** Last number whose delivery has completed. */
  private keptSeqIn: number;
  /**
   * After a telegram could not be kept (NAK 04) the sender keeps it and goes on sending new ones
   * before it resends; a later one kept first would make the refused one look like a repeat,
   * acknowledged and never kept. So until a delivery succeeds again, only the next number in
   * order is taken.
   */
  private inOrderOnly = false;
  /**
   * Deliveries accepted since the last rollback. After a failure, those behind it fail too (each
   * is numbered after its predecessor, which was not kept); their failures, arriving after the
   * resend has been accepted, must not roll the numbering back again.
   */
  private chain = 0;

  constructor(
    private readonly role: Role,
    private readonly settings: SessionSettings,
    private readonly port: SessionPort<R>,
    private readonly clock: () => number,
    private readonly events: SessionEvents = {},
    /** The peer's session as last stored (the host keeps it across restarts). */
    peer: { epoch: string | null; lastSeqIn: number } = { epoch: null, lastSeqIn: 0 },
  ) {
    this.peerEpoch = peer.epoch;
    this.lastSeqIn = this.keptSeqIn = peer.lastSeqIn;
    this.wire = settings.wire ?? defaultWire();
    this.decoder = this.wire.decoder();
  }

  get connected(): boolean {
    return this.write !== null;
  }

  /** Data telegrams sent and not yet acknowledged. */
  get inFlight(): number {
    return this.inflight.size;
  }

  /** The handle of the data telegram in flight with this number, if any. */
  inFlightRef(seq: number): R | undefined {
    return this.inflight.get(seq)?.item.ref;
  }

  /** A connection is up: resynchronise (SYNS, everything unacknowledged again, SYNE). */
  attach(write: (frame: string, t: Telegram) => void): void {
    this.write = write;
    this.connection += 1;
    this.decoder = this.wire.decoder();
    this.inflight.clear();
    this.lastBytesAt = this.lastOutAt = this.clock();
    const { epoch, nextSeq } = this.port.restart();
    this.resyncing = this.wire.resync;
    this.freshPeer = !this.wire.resync;
    if (this.wire.resync) this.send('SYNS', this.wire.layout.sequence.control, 'D', this.wire.encodeData('SYNS', { Epoch: epoch, NextSeq: nextSeq }));
    this.pump();
  }

  /** The connection is gone: what was in flight goes again after the next attach. */
  detach(): void {
    this.write = null;
    this.inflight.clear();
  }

  /** Bytes from the connection. */
  receive(chunk: Buffer | string): void {
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
      this.events.telegram?.('IN', this.wire.readable(item.content), now);
      this.onTelegram(item.content);
    }
  }

  /** Send what the window allows. `thorough`: let the port look beyond what it was told of. */
  pump(thorough = false): void {
    if (!this.write) return;
    const nowMs = this.clock();
    while (this.inflight.size < this.settings.window) {
      const items = this.port.nextOutbound(this.settings.window - this.inflight.size, thorough);
      thorough = false;
      if (items.length === 0) break;
      for (const item of items) {
        this.send(item.type, item.seq, 'D', item.data);
        // Unacknowledged by the layout: written is done.
        if (this.wire.acks) this.inflight.set(item.seq, { item, sentAt: nowMs });
        else this.port.acknowledged(item.ref);
      }
    }
    if (this.resyncing && this.port.backlogSent()) {
      this.resyncing = false;
      this.send('SYNE', this.wire.layout.sequence.control, 'D', '');
    }
  }

  /** The timers: dead peer, resend, heartbeat. Returns 'dead' when the connection must be dropped. */
  tick(): 'dead' | undefined {
    if (!this.write) return undefined;
    const nowMs = this.clock();
    if (this.wire.life && nowMs - this.lastBytesAt > 3 * this.settings.heartbeatMs) return 'dead';
    const [oldest] = this.inflight.values();
    if (oldest && nowMs - oldest.sentAt > this.settings.ackTimeoutMs) {
      for (const [seq, flight] of [...this.inflight]) {
        if (this.port.stillWanted && !this.port.stillWanted(flight.item.ref)) {
          this.inflight.delete(seq);
          continue;
        }
        this.send(flight.item.type, seq, 'D', flight.item.data);
        flight.sentAt = nowMs;
        this.counters.resends += 1;
      }
    }
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

  private onTelegram(content: string): void {
    let t: Telegram;
    try {
      t = this.wire.parseContent(content);
    } catch (err) {
      return this.nak(this.wire.sequenceOf(content), 'LIFE', NakReason.MALFORMED, (err as Error).message);
    }
    this.events.validTelegram?.(t);
    if (t.flag === 'A') return this.onAck(t);
    if (t.flag === 'N') return this.onNak(t);
    if (t.type === 'LIFE' || t.type === 'SYNE') return this.send(t.type, t.seq, 'A', this.wire.ackData(t));
    if (t.type === 'SYNS') return this.onSyncStart(t);
    if (this.role.receives.includes(t.type)) return this.onData(t);
    return this.nak(t.seq, t.type, NakReason.UNEXPECTED, `${t.type} is not sent by a ${this.role.peerKind}`, t);
  }

  private onSyncStart(t: Telegram): void {
    let f: Record<string, unknown>;
    try {
      f = this.wire.decodeData('SYNS', t.data);
    } catch (err) {
      return this.nak(t.seq, 'SYNS', NakReason.BAD_DATA, (err as Error).message, t);
    }
    if (f.Epoch !== this.peerEpoch) {
      // A new session of the peer (it restarted): its numbering starts afresh.
      const next = f.NextSeq as number;
      this.peerEpoch = f.Epoch as string;
      this.peerGen += 1;
      this.lastSeqIn = this.keptSeqIn = next > 1 ? next - 1 : 0;
      this.inOrderOnly = false;
      this.port.peerSession?.(this.peerEpoch, this.lastSeqIn);
      this.events.newPeerSession?.(this.peerEpoch, next);
    }
    this.send('SYNS', t.seq, 'A', this.wire.ackData(t));
  }

  private onData(t: Telegram): void {
    const { maxSequence, repeatWindow } = this.wire;
    if (this.freshPeer) {
      // No resynchronisation in this layout: the first telegram after a connect sets the numbering
      // (a telegram repeated across the reconnect is taken again: at least once, never lost).
      this.freshPeer = false;
      this.peerGen += 1;
      this.lastSeqIn = this.keptSeqIn = t.seq > 1 ? t.seq - 1 : maxSequence;
      this.inOrderOnly = false;
    }
    if (isRepeat(t.seq, this.lastSeqIn, maxSequence, repeatWindow)) {
      this.counters.duplicatesReceived += 1;
      // Kept already (our ACK was lost or late): acknowledge again, deliver nothing. Still being
      // kept (a slow disk): the ACK follows, never before it.
      if (isRepeat(t.seq, this.keptSeqIn, maxSequence, repeatWindow) && this.wire.acks) this.send(t.type, t.seq, 'A', this.wire.ackData(t));
      return;
    }
    if (this.inOrderOnly && t.seq !== this.wire.nextSequence(this.lastSeqIn)) {
      return this.nak(t.seq, t.type, NakReason.CANNOT_STORE, `cannot store now: send ${this.wire.nextSequence(this.lastSeqIn)} first`, t);
    }
    // Counted as accepted now, so a repeat arriving meanwhile is recognised. A delivery succeeds
    // only after its predecessor's (`after`), so a failure cannot leave a gap a repeat would cover.
    const after = this.lastSeqIn;
    this.lastSeqIn = t.seq;
    const connection = this.connection;
    const gen = this.peerGen;
    const chain = this.chain;
    let delivered: Promise<void>;
    try {
      delivered = this.port.deliver(t, after);
    } catch (err) {
      // Refused at once (its data does not decode, the side refuses it): as if never numbered.
      this.lastSeqIn = after;
      return this.refuse(t, err);
    }
    delivered.then(
      () => {
        if (gen === this.peerGen) {
          this.keptSeqIn = t.seq;
          this.inOrderOnly = false;
        }
        if (connection === this.connection && this.wire.acks) this.send(t.type, t.seq, 'A', this.wire.ackData(t));
      },
      (err) => {
        // Numbering goes back to the last telegram kept: it and what follows come again. Only the
        // first failure of a chain does this; the others are its consequence.
        if (gen === this.peerGen && chain === this.chain) {
          this.chain += 1;
          this.lastSeqIn = this.keptSeqIn;
          if (!(err instanceof RefuseError) && !(err instanceof TelegramError)) this.inOrderOnly = true;
        }
        if (connection === this.connection) this.refuse(t, err);
      },
    );
  }

  /** NAK a data telegram that was not kept: with the side's code, or 04 (cannot store now). */
  private refuse(t: Telegram, err: unknown): void {
    if (err instanceof RefuseError) return this.nak(t.seq, t.type, err.code, err.message, t);
    if (err instanceof TelegramError) return this.nak(t.seq, t.type, NakReason.BAD_DATA, err.message, t);
    this.events.storeFailed?.(t.seq, err);
    this.nak(t.seq, t.type, NakReason.CANNOT_STORE, 'cannot store now, send again', t);
  }

  private onAck(t: Telegram): void {
    const flight = this.inflight.get(t.seq);
    if (!flight || (this.wire.ackEchoesType && flight.item.type !== t.type)) return; // a late ACK for something already acknowledged
    this.inflight.delete(t.seq);
    this.port.acknowledged(flight.item.ref);
    this.pump();
  }

  private onNak(t: Telegram): void {
    this.counters.naksReceived += 1;
    const { code, text } = this.wire.parseNak(t);
    this.events.nakReceived?.(t.seq, t.type, code, text);
    const flight = this.inflight.get(t.seq);
    if (!flight || (this.wire.ackEchoesType && flight.item.type !== t.type) || code === this.wire.codes.CannotStore) return; // resent after the ACK timeout
    this.inflight.delete(t.seq);
    this.port.refused(flight.item.ref, { code, text });
    this.pump();
  }
}
