// The telegram session engine both ends of the sorter link run (docs/sorter-protocol.md): no
// sockets and no storage, only the protocol. The service's link (lib/link/sorter-link.ts) and the
// emulator's PLC (emulator/plc-link.ts) wrap it in TCP and give it their side's port. One session
// keeps the frames and the timers, and its two halves: ours (the handshake that opens each
// connection, the window of data telegrams in flight, their resend after the ACK timeout, the
// peer's answer to each) and the peer's (its session and epoch, the numbering of its data
// telegrams, repeats, each telegram's delivery to the port before its ACK or NAK).
import type { Socket } from 'node:net';
import {
  RefuseError,
  type Outbound,
  type Role,
  type SessionCounters,
  type SessionEvents,
  type SessionPort,
  type SessionSettings,
  zeroCounters,
} from './session-port';
import { MAX_SEQUENCE, NakReason, type Telegram, TelegramError, type TelegramType } from '../telegram/telegram';
import { type TelegramWire, defaultWire } from '../layout/wire';
import { errorMessage } from '../process/errors';

/** Numbers within this distance at or before the last accepted one are repeats, not new telegrams. */
const REPEAT_WINDOW = 100_000;

/** True if `seq` was already accepted when `last` was the last accepted number (0 = none yet); numbers 1..max. */
export function isRepeat(seq: number, last: number, max = MAX_SEQUENCE, window = REPEAT_WINDOW): boolean {
  if (last === 0) return false;
  return (last - seq + max) % max < window;
}

// Our half: the data telegrams we send.

/** What the outbound half needs of its session: a telegram out, and whether a connection is up. */
interface OutboundLine {
  send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void;
  /** A connection is up. */
  connected(): boolean;
}

interface InFlight<R> {
  item: Outbound<R>;
  sentAt: number;
}

/** The data telegrams we send, from the handshake of a connection to the peer's answer to each. */
class OutboundWindow<R> {
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

// The peer's half: its data telegrams, numbered and delivered.

/** What the inbound half needs of its session: its answers out, and which connection is up. */
interface InboundLine {
  send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void;
  /** Refuse a telegram: `reason` is one of NakReason's, or a port's own code. */
  nak(seq: number, type: TelegramType, reason: number, why: string, answered?: Telegram): void;
  /** Counts connections, so that a commit finishing after a reconnect does not ACK on the new one. */
  connection(): number;
}

/** The peer's data telegrams: numbered, recognised when repeated, delivered once, answered after. */
class InboundNumbering<R> {
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

/**
 * A connection's writer for `attach`: the session writes its telegrams to the socket itself, and
 * those of one tick (the ACKs for a chunk, the assignments they let through) leave in one write,
 * corked at the first and uncorked once this tick's work is done.
 */
export function tickWriter(socket: Socket): (frame: string) => void {
  return (frame) => {
    if (socket.writableCorked === 0) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
    socket.write(frame, 'latin1');
  };
}

/**
 * One end of a telegram session: framing through the wire of its layout (protocol version 1
 * unless the settings give another), numbering, the window, resend after
 * the ACK timeout, LIFE and the dead-peer rule (3 heartbeats), SYNS/SYNE resynchronisation,
 * repeat detection and the NAK rules. `attach` starts a connection's part with a `write`,
 * `receive` takes its bytes, `tick` runs the timers, `detach` ends it.
 */
export class TelegramSession<R> {
  readonly counters: SessionCounters = zeroCounters();
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
   * resend of the oldest telegram in flight, our LIFE after half to a whole heartbeat of silence,
   * the dead-peer rule. Each moves later with the traffic, so a timer armed for it finds at worst
   * nothing due.
   */
  nextDueAt(): number {
    if (!this.write) return Infinity;
    const life = this.wire.life ? Math.min(this.lifeDueAt(), this.lastBytesAt + 3 * this.settings.heartbeatMs + 1) : Infinity;
    return Math.min(life, this.outbound.resendAt());
  }

  /**
   * When our LIFE goes: after half to a whole heartbeat of silence from our side, on one of the
   * clock's multiples of the heartbeat where one falls in that span, else after half a heartbeat
   * (from where the next multiple is in reach). Once the line is quiet the LIFEs settle on the
   * clock's multiples of the heartbeat (by the second one), one a heartbeat, where an idle
   * service does its other periodic work (lib/host/beat.ts): one wake-up for both.
   */
  private lifeDueAt(): number {
    const heartbeat = this.settings.heartbeatMs;
    const half = heartbeat / 2;
    const onBeat = Math.ceil((this.lastOutAt + half) / heartbeat) * heartbeat;
    return onBeat <= this.lastOutAt + heartbeat ? onBeat : this.lastOutAt + half;
  }

  /** The timers: dead peer, resend, heartbeat. Returns 'dead' when the connection must be dropped. */
  tick(): 'dead' | undefined {
    if (!this.write) return undefined;
    const nowMs = this.clock();
    if (this.wire.life && nowMs - this.lastBytesAt > 3 * this.settings.heartbeatMs) return 'dead';
    this.counters.resends += this.outbound.resendDue(nowMs);
    this.pump(true);
    if (this.wire.life && nowMs >= this.lifeDueAt()) this.send('LIFE', this.wire.layout.sequence.control, 'D', '');
    return undefined;
  }

  private send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string, code?: number): void {
    if (!this.write) return;
    const t: Telegram = { sender: this.role.name, receiver: this.role.peerName, seq, type, flag, data };
    const frame = this.wire.encodeFrame(Object.assign({}, t, { code })); // not a spread: lib/host/merged.ts
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
