// The peer's half of a telegram session: its session (SYNS and its epoch), the numbering of its
// data telegrams (the numbers it refused for good count as handled), repeats, and each
// telegram's delivery to the port before its ACK (or NAK).
import { NakReason, type Telegram, TelegramError, type TelegramType } from '../telegram/telegram';
import type { TelegramWire } from '../layout/wire';
import { RefuseError, type SessionCounters, type SessionEvents, type SessionPort, isRepeat } from './session-port';
import { errorMessage } from '../process/errors';

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
   * order is taken (numbers refused for good skipped: the sender never sends them again).
   */
  private inOrderOnly = false;
  /**
   * Deliveries accepted since the last rollback. After a failure, those behind it fail too (each
   * is numbered after its predecessor, which was not kept); their failures, arriving after the
   * resend has been accepted, must not roll the numbering back again.
   */
  private chain = 0;
  /** The peer's numbers refused for good since the last one kept. */
  private readonly refusals: Refusals;
  /** A layout without resynchronisation: the peer's numbering is taken as it comes after each connect. */
  private freshPeer = false;
  /**
   * The store's last number may not be the one the numbering was taken up after (a fresh home, a
   * restart of either side): the next delivery sets it, whatever it was (`after` null), until one
   * is kept. Those numbered behind it while it is under way are checked against it as usual.
   */
  private anchorNext = false;
  /** Nothing kept since the numbering was taken up: a failure takes it up again with the resend. */
  private unanchored = false;
  /** Why the peer's telegrams are refused for good (a failure that will not heal by itself), null if they are not. */
  private refusing: string | null = null;
  /**
   * Until the peer's first SYNE since this process started, what it sends are resends of telegrams
   * an earlier run of this process may have handed out before their commit: marked, unless that
   * run stopped cleanly (it committed everything it had handed out).
   */
  private firstResync: boolean;
  private connections = 0;
  /** Numbers refused with 04 (not stored now): their message may have been handed out; the resend is marked. */
  private readonly notStored = new Set<number>();

  constructor(
    /**
     * The peer's session as last stored (the host keeps it across restarts); `lastStopClean`: the
     * run before stopped cleanly, so nothing it handed out can be resent uncommitted.
     */
    peer: { epoch: string | null; lastSeqIn: number; lastStopClean?: boolean },
    private readonly wire: TelegramWire,
    private readonly port: SessionPort<R>,
    private readonly line: InboundLine,
    private readonly counters: SessionCounters,
    private readonly events: SessionEvents,
  ) {
    this.peerEpoch = peer.epoch;
    this.lastSeqIn = this.keptSeqIn = peer.lastSeqIn;
    this.refusals = new Refusals(peer.lastSeqIn, wire);
    this.firstResync = wire.resync && !peer.lastStopClean;
  }

  /** The peer's SYNE: everything it had unacknowledged has come again. */
  syncEnd(): void {
    this.firstResync = false;
  }

  /** A connection is up: without resynchronisation, its first data telegram sets the numbering. */
  open(): void {
    this.freshPeer = !this.wire.resync;
    // A later connection's resends were sent to this process: kept already, or still being kept.
    if (this.connections++ > 0) this.firstResync = false;
  }

  /** The peer's SYNS: a new epoch is a new session of the peer, numbered afresh. */
  syncStart(t: Telegram): void {
    let f: Record<string, unknown>;
    try {
      f = this.wire.decodeData('SYNS', t.data);
    } catch (err) {
      return this.line.nak(t.seq, 'SYNS', NakReason.BAD_DATA, errorMessage(err), t);
    }
    if (f.Epoch !== this.peerEpoch) {
      // A new session of the peer (it restarted): its numbering starts afresh.
      const next = Number(f.NextSeq); // the SYNS fields: a number and a text (lib/telegram/contract.ts)
      this.peerEpoch = String(f.Epoch);
      this.peerGen += 1;
      this.lastSeqIn = this.keptSeqIn = next > 1 ? next - 1 : 0;
      this.inOrderOnly = false;
      this.refusals.reset(this.lastSeqIn);
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
      this.refusals.reset(this.lastSeqIn);
      this.anchorNext = this.unanchored = true;
    }
    if (isRepeat(t.seq, this.lastSeqIn, maxSequence, repeatWindow)) {
      this.counters.duplicatesReceived += 1;
      // Kept already (our ACK was lost or late): acknowledge again, deliver nothing. Still being
      // kept (a slow disk): the ACK follows, never before it.
      if (isRepeat(t.seq, this.keptSeqIn, maxSequence, repeatWindow) && this.wire.acks)
        this.line.send(t.type, t.seq, 'A', this.wire.ackData(t));
      return;
    }
    if (this.inOrderOnly) {
      const expected = this.refusals.after(this.lastSeqIn);
      if (t.seq !== expected) return this.line.nak(t.seq, t.type, NakReason.CANNOT_STORE, `cannot store now: send ${expected} first`, t);
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
    const anchored = this.anchorNext;
    this.anchorNext = false;
    this.lastSeqIn = t.seq;
    const connection = this.line.connection();
    const gen = this.peerGen;
    const chain = this.chain;
    const resent = this.notStored.delete(t.seq) || this.firstResync;
    let delivered: Promise<void>;
    try {
      delivered = this.port.deliver(t, anchored ? null : after, resent);
    } catch (err) {
      // Refused at once (its data does not decode, the side refuses it): never numbered for the port.
      this.lastSeqIn = after;
      this.anchorNext = anchored;
      this.notKept(t, err);
      return this.refuse(t, err);
    }
    delivered.then(
      () => {
        if (gen === this.peerGen) {
          this.keptSeqIn = t.seq;
          this.inOrderOnly = false;
          this.unanchored = false;
          this.refusals.kept(t.seq);
        }
        if (this.refusing !== null) {
          this.refusing = null;
          this.events.refusing?.(null);
        }
        if (connection === this.line.connection() && this.wire.acks) this.line.send(t.type, t.seq, 'A', this.wire.ackData(t));
      },
      (failure) => {
        const err = this.lasting(failure, gen === this.peerGen && chain === this.chain);
        if (gen === this.peerGen && chain === this.chain) {
          // Numbering goes back to the last telegram kept: it and what follows come again. Only
          // the first failure of a chain does this; the others are its consequence. Those numbered
          // after it fail behind it (even when it is refused for good): a new one waits for them.
          if (this.lastSeqIn !== t.seq) this.inOrderOnly = true;
          this.chain += 1;
          this.lastSeqIn = this.keptSeqIn;
          // Nothing kept since the numbering was taken up: the next one takes it up again.
          this.anchorNext = this.unanchored;
        }
        if (gen === this.peerGen) this.notKept(t, err);
        if (connection === this.line.connection()) this.refuse(t, err);
      },
    );
  }

  /**
   * A failure that would come back however often the peer sends the telegram (the port says which)
   * becomes a refusal for good, said once: the sender is told at once instead of resending forever.
   * A refused number is lasting only as the first failure of a chain (its predecessor was kept, so
   * the store disagrees with the numbering); behind a failed one it is that one's consequence.
   * Numbering: NAK Unexpected; anything else (a schema error): NAK BadData.
   */
  private lasting(err: unknown, firstOfChain: boolean): unknown {
    const lasting = this.port.lastingFailure?.(err);
    if (!lasting || (lasting.numbering && !firstOfChain)) return err;
    const reason = lasting.numbering ? NakReason.UNEXPECTED : NakReason.BAD_DATA;
    if (this.refusing === null) {
      this.refusing = lasting.reason;
      this.events.refusing?.(lasting.reason, this.wire.nakCode(reason));
    }
    return new RefuseError(reason, lasting.reason);
  }

  /**
   * A telegram not kept. Refused for good, it is handled: the sender drops it and goes on after
   * it. Not stored now (NAK 04), it comes again, unless a resend was kept meanwhile, and nothing
   * numbered after it may be kept before it.
   */
  private notKept(t: Telegram, err: unknown): void {
    if (refusedForGood(err)) this.refusals.refused(t.seq);
    else if (!isRepeat(t.seq, this.keptSeqIn, this.wire.maxSequence, this.wire.repeatWindow)) {
      this.inOrderOnly = true;
      // Bounded: a disk that refuses for long refuses the same few numbers again and again.
      if (this.notStored.size >= 4096) this.notStored.clear();
      this.notStored.add(t.seq);
    }
  }

  /** NAK a data telegram that was not kept: with the side's code, or 04 (cannot store now). */
  private refuse(t: Telegram, err: unknown): void {
    if (err instanceof RefuseError) return this.line.nak(t.seq, t.type, err.code, err.message, t);
    if (err instanceof TelegramError) return this.line.nak(t.seq, t.type, NakReason.BAD_DATA, err.message, t);
    this.events.storeFailed?.(t.seq, err);
    this.line.nak(t.seq, t.type, NakReason.CANNOT_STORE, 'cannot store now, send again', t);
  }
}

/** A delivery that failed this way is answered with a NAK the sender drops the telegram for (not 04). */
const refusedForGood = (err: unknown): boolean => err instanceof RefuseError || err instanceof TelegramError;

/**
 * The peer's numbers refused for good since the last one kept. The sender drops such a telegram
 * and never sends it again, so for the numbering it is handled: the next number in order is the
 * one after it. Refusals right after the last number kept are one run (`through`); the few behind
 * a delivery still under way or to be resent wait in `ahead` until the run reaches them.
 */
class Refusals {
  /** Every number after the last one kept, up to this one, was refused for good (equal to it: none). */
  private through: number;
  private readonly ahead = new Set<number>();

  constructor(
    lastKept: number,
    private readonly wire: TelegramWire,
  ) {
    this.through = lastKept;
  }

  /** The peer's numbering starts afresh after `lastKept`. */
  reset(lastKept: number): void {
    this.through = lastKept;
    this.ahead.clear();
  }

  /** `seq` was kept: refusals before it no longer matter. */
  kept(seq: number): void {
    if (!this.atOrBefore(seq, this.through)) this.through = seq;
    for (const n of this.ahead) if (this.atOrBefore(n, this.through)) this.ahead.delete(n);
    this.joinRun();
  }

  /** `seq` was refused for good. */
  refused(seq: number): void {
    if (seq === this.wire.nextSequence(this.through)) {
      this.through = seq;
      this.joinRun();
    } else if (!this.atOrBefore(seq, this.through)) this.ahead.add(seq);
  }

  /** The number that follows `last` among those the sender still sends. */
  after(last: number): number {
    let next = this.wire.nextSequence(this.atOrBefore(last, this.through) ? this.through : last);
    while (this.ahead.has(next)) next = this.wire.nextSequence(next);
    return next;
  }

  private joinRun(): void {
    while (this.ahead.delete(this.wire.nextSequence(this.through))) this.through = this.wire.nextSequence(this.through);
  }

  private atOrBefore(seq: number, last: number): boolean {
    return isRepeat(seq, last, this.wire.maxSequence, this.wire.repeatWindow);
  }
}
