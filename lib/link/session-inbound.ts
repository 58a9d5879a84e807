// The peer's half of a telegram session: its session (SYNS and its epoch), the numbering of its
// data telegrams, repeats, and each telegram's delivery to the port before its ACK (or NAK).
import { NakReason, type Telegram, TelegramError, type TelegramType } from '../telegram/codec';
import type { TelegramWire } from '../telegram/wire';
import { RefuseError, type SessionCounters, type SessionEvents, type SessionPort, isRepeat } from './session-port';

/** What the inbound half needs of its session: its answers out, and which connection is up. */
export interface InboundLine {
  send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void;
  /** Refuse a telegram: `reason` is one of NakReason's, or a port's own code. */
  nak(seq: number, type: TelegramType, reason: number, why: string, answered?: Telegram): void;
  /** Counts connections, so that a commit finishing after a reconnect does not ACK on the new one. */
  connection(): number;
}

/** The peer's data telegrams: numbered, recognised when repeated, delivered once, answered after. */
export class InboundNumbering<R> {
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
  /** A layout without resynchronisation: the peer's numbering is taken as it comes after each connect. */
  private freshPeer = false;

  constructor(
    /** The peer's session as last stored (the host keeps it across restarts). */
    peer: { epoch: string | null; lastSeqIn: number },
    private readonly wire: TelegramWire,
    private readonly port: SessionPort<R>,
    private readonly line: InboundLine,
    private readonly counters: SessionCounters,
    private readonly events: SessionEvents,
  ) {
    this.peerEpoch = peer.epoch;
    this.lastSeqIn = this.keptSeqIn = peer.lastSeqIn;
  }

  /** A connection is up: without resynchronisation, its first data telegram sets the numbering. */
  open(): void {
    this.freshPeer = !this.wire.resync;
  }

  /** The peer's SYNS: a new epoch is a new session of the peer, numbered afresh. */
  syncStart(t: Telegram): void {
    let f: Record<string, unknown>;
    try {
      f = this.wire.decodeData('SYNS', t.data);
    } catch (err) {
      return this.line.nak(t.seq, 'SYNS', NakReason.BAD_DATA, (err as Error).message, t);
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
    this.line.send('SYNS', t.seq, 'A', this.wire.ackData(t));
  }

  /** A data telegram of a type this side receives: a repeat is answered again, a new one delivered. */
  data(t: Telegram): void {
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
      if (isRepeat(t.seq, this.keptSeqIn, maxSequence, repeatWindow) && this.wire.acks) this.line.send(t.type, t.seq, 'A', this.wire.ackData(t));
      return;
    }
    if (this.inOrderOnly && t.seq !== this.wire.nextSequence(this.lastSeqIn)) {
      return this.line.nak(t.seq, t.type, NakReason.CANNOT_STORE, `cannot store now: send ${this.wire.nextSequence(this.lastSeqIn)} first`, t);
    }
    this.deliver(t);
  }

  /**
   * Hand a new telegram to the port. Counted as accepted now, so a repeat arriving meanwhile is
   * recognised. A delivery succeeds only after its predecessor's (`after`), so a failure cannot
   * leave a gap a repeat would cover.
   */
  private deliver(t: Telegram): void {
    const after = this.lastSeqIn;
    this.lastSeqIn = t.seq;
    const connection = this.line.connection();
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
        if (connection === this.line.connection() && this.wire.acks) this.line.send(t.type, t.seq, 'A', this.wire.ackData(t));
      },
      (err) => {
        // Numbering goes back to the last telegram kept: it and what follows come again. Only the
        // first failure of a chain does this; the others are its consequence.
        if (gen === this.peerGen && chain === this.chain) {
          this.chain += 1;
          this.lastSeqIn = this.keptSeqIn;
          if (!(err instanceof RefuseError) && !(err instanceof TelegramError)) this.inOrderOnly = true;
        }
        if (connection === this.line.connection()) this.refuse(t, err);
      },
    );
  }

  /** NAK a data telegram that was not kept: with the side's code, or 04 (cannot store now). */
  private refuse(t: Telegram, err: unknown): void {
    if (err instanceof RefuseError) return this.line.nak(t.seq, t.type, err.code, err.message, t);
    if (err instanceof TelegramError) return this.line.nak(t.seq, t.type, NakReason.BAD_DATA, err.message, t);
    this.events.storeFailed?.(t.seq, err);
    this.line.nak(t.seq, t.type, NakReason.CANNOT_STORE, 'cannot store now, send again', t);
  }
}
