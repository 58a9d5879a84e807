// What a telegram session (lib/link/session.ts) asks of its side, and what it tells it: the
// port each end implements, settings, events and counters.
import type { SorterMessage } from '../../model/messages';
import type { Telegram, TelegramType } from '../telegram/telegram';
import type { TelegramWire } from '../layout/wire';

/** Which end this is: its name, its peer's, and the data telegram types it receives. */
export interface Role {
  name: string;
  peerName: string;
  receives: readonly TelegramType[];
  /** Says what a peer of the wrong kind sent, in a NAK 03 ("REQU is not sent by a host"). */
  peerKind: string;
}

export const HOST_RECEIVES = ['REQU', 'VERI', 'SCAN'] as const satisfies readonly TelegramType[];
export const PLC_RECEIVES = ['ASGN', 'DSET'] as const satisfies readonly TelegramType[];

/** A data telegram to send; `ref` is the side's own handle on it (an outbox entry, a pending item). */
export interface Outbound<R> {
  seq: number;
  type: TelegramType;
  data: string;
  ref: R;
}

/** The peer refused a data telegram for good (a NAK other than 04). */
export interface Refusal {
  code: number;
  text: string;
}

/** The side's port: where outbound telegrams come from, where inbound ones go. */
export interface SessionPort<R> {
  /** Connected: our session id, our oldest unacknowledged number (0: none), and start sending from it again. */
  restart(): { epoch: string; nextSeq: number };
  /** Up to `max` data telegrams not yet sent since the restart, in order. `thorough`: the periodic look. */
  nextOutbound(max: number, thorough: boolean): Outbound<R>[];
  /** Everything that was pending at the restart has been sent (then SYNE goes out). */
  backlogSent(): boolean;
  /** About to be resent: false drops it instead (e.g. an assignment past its time to live). */
  stillWanted?(ref: R): boolean;
  acknowledged(ref: R): void;
  refused(ref: R, refusal: Refusal): void;
  /**
   * A new data telegram from the peer (not a repeat), accepted only if the last number stored is
   * `after`. Resolves once it is kept; the ACK follows. Rejecting with a RefuseError NAKs it with
   * that code; any other rejection NAKs it with 04 (cannot store now) and the peer resends it.
   * `resent`: this side may have handed the telegram's message out before (lib/link/session.ts, the peer's half).
   * `after` null: the peer's numbering starts again with this telegram, whatever was stored.
   */
  deliver(t: Telegram, after: number | null, resent: boolean): Promise<void>;
  /**
   * Why a delivery that failed this way would fail again however often the peer sends it (a
   * schema error), or null if it may heal (a full disk). `numbering`: the store refused the
   * telegram's number, lasting only when its predecessor was kept (else it failed behind it).
   */
  lastingFailure?(err: unknown): { numbering: boolean; reason: string } | null;
  /** The peer announced a new session: numbering from it starts after `lastSeqIn`. */
  peerSession?(epoch: string, lastSeqIn: number): void;
}

/** Thrown (or rejected with) by a port's deliver to refuse a telegram with a NAK code. */
export class RefuseError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RefuseError';
  }
}

/** Timing and window of a session, and the layout it speaks (protocol version 1 if none). */
export interface SessionSettings {
  heartbeatMs: number;
  ackTimeoutMs: number;
  window: number;
  wire?: TelegramWire;
}

/** What the session tells its owner about, beyond the telegrams (log lines, traffic log). */
export interface SessionEvents {
  garbage?(bytes: string, reason: string): void;
  telegram?(direction: 'IN' | 'OUT', content: string, atMs: number): void;
  /** A telegram from the peer that parsed: the peer speaks the protocol. */
  validTelegram?(t: Telegram): void;
  nakSent?(seq: number, type: TelegramType, code: number, why: string): void;
  nakReceived?(seq: number, type: TelegramType, code: number, text: string): void;
  newPeerSession?(epoch: string, nextSeq: number): void;
  storeFailed?(seq: number, err: unknown): void;
  /** The peer's telegrams are refused for good (with the layout's `code`) for a reason that will not heal by itself; null: one was kept again. */
  refusing?(reason: string | null, code?: number): void;
}

/** The session's counters, for /status and the emulator's report. */
export interface SessionCounters {
  telegramsIn: number;
  telegramsOut: number;
  resends: number;
  naksSent: number;
  naksReceived: number;
  duplicatesReceived: number;
  garbageBytes: number;
}

/** A session's counters before its first telegram. */
export const zeroCounters = (): SessionCounters => ({
  telegramsIn: 0,
  telegramsOut: 0,
  resends: 0,
  naksSent: 0,
  naksReceived: 0,
  duplicatesReceived: 0,
  garbageBytes: 0,
});

/** A message from the sorter, to be kept: `after` is the number that must be the last one stored (null: any). */
export interface InboundMessage {
  seq: number;
  after: number | null;
  message: SorterMessage;
  /** performance.now() when its bytes arrived (wake latency). */
  arrivedAt: number;
  /**
   * The peer sends it again after this side may have handed its message out without keeping it:
   * a resend after this process started (a crash before the commit), or after a NAK 04.
   */
  resent?: boolean;
}
