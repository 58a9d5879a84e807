// The telegram session engine both ends of the sorter link run (docs/sorter-protocol.md): no
// sockets and no storage, only the protocol. The service's link (lib/link/sorter-link.ts) and the
// emulator's PLC (emulator/plc-link.ts) wrap it in TCP and give it their side's port.
import { TelegramDecoder } from '../telegram/decoder';
import { RefuseError, type Role, type SessionCounters, type SessionEvents, type SessionPort, type SessionSettings, type Outbound, isRepeat } from './session-port';
import {
  NakReason,
  type Telegram,
  TelegramError,
  type TelegramType,
  decodeData,
  encodeData,
  encodeFrame,
  nakData,
  parseContent,
  nextSequence,
  parseNak,
  sequenceOf,
} from '../telegram/codec';

interface InFlight<R> {
  item: Outbound<R>;
  sentAt: number;
}

/**
 * One end of a telegram session: framing through the codec, numbering, the window, resend after
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
  private decoder = new TelegramDecoder();
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
    this.decoder = new TelegramDecoder();
    this.inflight.clear();
    this.lastBytesAt = this.lastOutAt = this.clock();
    const { epoch, nextSeq } = this.port.restart();
    this.resyncing = true;
    this.send('SYNS', 0, 'D', encodeData('SYNS', { Epoch: epoch, NextSeq: nextSeq }));
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
      this.events.telegram?.('IN', item.content, now);
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
        this.inflight.set(item.seq, { item, sentAt: nowMs });
      }
    }
    if (this.resyncing && this.port.backlogSent()) {
      this.resyncing = false;
      this.send('SYNE', 0, 'D', '');
    }
  }

  /** The timers: dead peer, resend, heartbeat. Returns 'dead' when the connection must be dropped. */
  tick(): 'dead' | undefined {
    if (!this.write) return undefined;
    const nowMs = this.clock();
    if (nowMs - this.lastBytesAt > 3 * this.settings.heartbeatMs) return 'dead';
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
    if (nowMs - this.lastOutAt > this.settings.heartbeatMs) this.send('LIFE', 0, 'D', '');
    return undefined;
  }

  private send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void {
    if (!this.write) return;
    const t: Telegram = { sender: this.role.name, receiver: this.role.peerName, seq, type, flag, data };
    const frame = encodeFrame(t);
    const now = this.clock();
    this.write(frame, t);
    this.events.telegram?.('OUT', frame.slice(1, -1), now);
    this.lastOutAt = now;
    this.counters.telegramsOut += 1;
  }

  private nak(seq: number, type: TelegramType, code: number, why: string): void {
    this.counters.naksSent += 1;
    this.events.nakSent?.(seq, type, code, why);
    this.send(type, seq, 'N', nakData(code, why));
  }

  private onTelegram(content: string): void {
    let t: Telegram;
    try {
      t = parseContent(content);
    } catch (err) {
      return this.nak(sequenceOf(content), 'LIFE', NakReason.MALFORMED, (err as Error).message);
    }
    if (t.flag === 'A') return this.onAck(t);
    if (t.flag === 'N') return this.onNak(t);
    if (t.type === 'LIFE' || t.type === 'SYNE') return this.send(t.type, t.seq, 'A', '');
    if (t.type === 'SYNS') return this.onSyncStart(t);
    if (this.role.receives.includes(t.type)) return this.onData(t);
    return this.nak(t.seq, t.type, NakReason.UNEXPECTED, `${t.type} is not sent by a ${this.role.peerKind}`);
  }

  private onSyncStart(t: Telegram): void {
    let f: Record<string, unknown>;
    try {
      f = decodeData('SYNS', t.data);
    } catch (err) {
      return this.nak(t.seq, 'SYNS', NakReason.BAD_DATA, (err as Error).message);
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
    this.send('SYNS', t.seq, 'A', '');
  }

  private onData(t: Telegram): void {
    if (isRepeat(t.seq, this.lastSeqIn)) {
      this.counters.duplicatesReceived += 1;
      // Kept already (our ACK was lost or late): acknowledge again, deliver nothing. Still being
      // kept (a slow disk): the ACK follows, never before it.
      if (isRepeat(t.seq, this.keptSeqIn)) this.send(t.type, t.seq, 'A', '');
      return;
    }
    if (this.inOrderOnly && t.seq !== nextSequence(this.lastSeqIn)) {
      return this.nak(t.seq, t.type, NakReason.CANNOT_STORE, `cannot store now: send ${nextSequence(this.lastSeqIn)} first`);
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
        if (connection === this.connection) this.send(t.type, t.seq, 'A', '');
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
    if (err instanceof RefuseError) return this.nak(t.seq, t.type, err.code, err.message);
    if (err instanceof TelegramError) return this.nak(t.seq, t.type, NakReason.BAD_DATA, err.message);
    this.events.storeFailed?.(t.seq, err);
    this.nak(t.seq, t.type, NakReason.CANNOT_STORE, 'cannot store now, send again');
  }

  private onAck(t: Telegram): void {
    const flight = this.inflight.get(t.seq);
    if (!flight || flight.item.type !== t.type) return; // a late ACK for something already acknowledged
    this.inflight.delete(t.seq);
    this.port.acknowledged(flight.item.ref);
    this.pump();
  }

  private onNak(t: Telegram): void {
    this.counters.naksReceived += 1;
    const { code, text } = parseNak(t.data);
    this.events.nakReceived?.(t.seq, t.type, code, text);
    const flight = this.inflight.get(t.seq);
    if (!flight || flight.item.type !== t.type || code === NakReason.CANNOT_STORE) return; // resent after the ACK timeout
    this.inflight.delete(t.seq);
    this.port.refused(flight.item.ref, { code, text });
    this.pump();
  }
}
