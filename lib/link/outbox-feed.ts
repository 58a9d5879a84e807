// The service's side of the telegram session's port: outbound, what to send comes from the
// outbox, in id order, numbered by outbox id (expired assignments are dropped, acknowledged
// entries leave it); inbound, each new data telegram goes to the telegram trigger.
import { lastingFailure } from '../../db/lasting-failure';
import type { OutboxEntry, OutboxReads } from '../../db/outbox-store';
import type { Logger } from '../process/logger';
import { MAX_SEQUENCE, type Telegram, TelegramError, type TelegramType } from '../telegram/telegram';
import { type OutboundTelegram, type TelegramWire, defaultWire } from '../layout/wire';
import type { InboundMessage, Outbound, Refusal, SessionPort } from './session-port';

/** Outbound data telegrams are numbered by their outbox id (1..max, the layout's), so a resend after a restart keeps its number. */
export const seqOfOutboxId = (id: number, max = MAX_SEQUENCE) => ((id - 1) % max) + 1;

/** What the feed needs: the outbox (reads; writes resolve once committed), the time to live, and where inbound telegrams go. */
export interface OutboxFeedDeps {
  outbox: OutboxReads & { removeFromOutbox(id: number): Promise<boolean> };
  dropFromOutbox(entry: OutboxEntry, reason: string, at: string): Promise<void>;
  /** Our session id with the sorter, as stored. */
  epoch: string;
  /** The telegram trigger (manifest.json): commit a message from the sorter; resolves once committed. */
  receive(type: TelegramType, event: InboundMessage): Promise<void>;
  /** Store the sorter's new session: numbering from it starts after `lastSeqIn`. */
  setPeerSession(epoch: string, lastSeqIn: number): Promise<void>;
  assignmentTtlSeconds: number;
  /** Entries kept in memory between a commit and their sending (a window's worth suffices). */
  maxOffered: number;
  log: Logger;
  clock: () => Date;
  /** A clock that never steps, in ms, for the assignments' ages (default: performance.now()). */
  monotonicMs?: () => number;
  /** The sorter's telegram layout (default: protocol version 1). */
  wire?: TelegramWire;
}

/**
 * The service's session port. Entries committed by a POST are offered and sent from memory;
 * anything else (a resync after a reconnect, rows another process wrote) is read from the table
 * in order.
 */
export class OutboxFeed implements SessionPort<OutboxEntry> {
  private lastSentId = 0;
  /** The telegrams of entries offered already encoded (checked against the layout before the commit): not encoded again. */
  private readonly encodedOnOffer = new WeakMap<OutboxEntry, OutboundTelegram>();
  /** Entries offered since the last read, in id order. */
  private offered: OutboxEntry[] = [];
  /** The newest outbox id known to exist (offered, or found at connect): past it, nothing to read. */
  private newestId = 0;
  private resyncUntilId = 0;
  /** Told when the sorter acknowledges an entry, by outbox id (a POST waiting for it: DurableBySorterAck). */
  private readonly listeners = new Map<number, () => void>();

  /**
   * When each assignment in the outbox was created, on the clock that never steps, by outbox id:
   * what its age for AssignmentTtlSeconds is counted from. Taken from the wall clock once, when
   * this process first sees the entry (its POST, or its row read after a restart), so that a step
   * of the system clock later (NTP setting the clock of a box that started without a
   * battery-backed one: hours, or months) neither drops a fresh assignment the WCS was answered
   * 200 for nor keeps a stale one. Forgotten when the entry leaves the outbox through this feed
   * (acknowledged, dropped), the only ways it leaves.
   */
  private readonly createdMono = new Map<number, number>();
  private readonly monotonicMs: () => number;

  private readonly wire: TelegramWire;

  constructor(private readonly deps: OutboxFeedDeps) {
    this.wire = deps.wire ?? defaultWire();
    this.monotonicMs = deps.monotonicMs ?? (() => performance.now());
  }

  /**
   * A new entry is committed. `connected`: keep it in memory to send without reading it back.
   * `acknowledged`: called on the sorter's ACK of it (forgotten if it is refused or dropped).
   */
  offer(entry: OutboxEntry, connected: boolean, acknowledged?: () => void, telegram?: OutboundTelegram): void {
    this.newestId = Math.max(this.newestId, entry.id);
    if (entry.message.kind === 'ASSIGNMENT') this.ageOf(entry);
    if (acknowledged) this.listeners.set(entry.id, acknowledged);
    if (connected && this.offered.length < this.deps.maxOffered) {
      this.offered.push(entry);
      if (telegram) this.encodedOnOffer.set(entry, telegram);
    }
  }

  /** A connection is up: start again at the oldest unacknowledged entry, numbered `nextSeq` (0: none). */
  restart(): { epoch: string; nextSeq: number } {
    this.lastSentId = 0;
    this.offered = [];
    const [first] = this.deps.outbox.peek(1);
    this.resyncUntilId = this.deps.outbox.lastId();
    this.newestId = Math.max(this.newestId, this.resyncUntilId);
    return { epoch: this.deps.epoch, nextSeq: first ? seqOfOutboxId(first.id, this.wire.maxSequence) : 0 };
  }

  backlogSent(): boolean {
    return this.lastSentId >= this.resyncUntilId;
  }

  /**
   * Up to `max` entries after the last one sent. The table is read only when it holds something
   * newer than what was sent, or when `thorough` asks (the periodic safety net).
   */
  nextOutbound(max: number, thorough: boolean): Outbound<OutboxEntry>[] {
    const out: Outbound<OutboxEntry>[] = [];
    const nowMs = this.deps.clock().getTime();
    while (out.length < max && (thorough || this.lastSentId < this.newestId)) {
      thorough = false;
      // Outbox ids are consecutive (one above the highest given, db/queue-rows.ts nextId, and a rolled-back insert takes none).
      while ((this.offered[0]?.id ?? Infinity) <= this.lastSentId) this.offered.shift();
      const entries: OutboxEntry[] = [];
      for (let id = this.lastSentId + 1; entries.length < max - out.length; id++) {
        const next = this.offered[0];
        if (next?.id !== id) break;
        entries.push(next);
        this.offered.shift();
      }
      if (entries.length === 0) entries.push(...this.deps.outbox.after(this.lastSentId, max - out.length));
      const last = entries.at(-1);
      if (!last) break;
      this.newestId = Math.max(this.newestId, last.id);
      for (const entry of entries) {
        this.lastSentId = entry.id;
        const telegram = this.expired(entry, nowMs) ? null : this.encoded(entry, nowMs);
        if (telegram) out.push({ seq: seqOfOutboxId(entry.id, this.wire.maxSequence), ...telegram, ref: entry });
      }
    }
    return out;
  }

  /** About to be resent: an assignment past its time to live is dropped instead. */
  stillWanted(entry: OutboxEntry): boolean {
    return !this.expired(entry, this.deps.clock().getTime());
  }

  acknowledged(entry: OutboxEntry): void {
    this.told(entry.id)?.();
    this.createdMono.delete(entry.id);
    // If this removal is lost in a crash, the entry is sent again and the sorter recognises the repeat.
    this.deps.outbox
      .removeFromOutbox(entry.id)
      .catch((err) => this.deps.log.error({ err, outboxId: entry.id }, 'could not remove an acknowledged outbox entry'));
  }

  refused(entry: OutboxEntry, { code, text }: Refusal): void {
    this.drop(entry, `NAK ${code}: ${text}`, this.deps.clock().toISOString());
  }

  /** Decoded here (a bad field throws: NAK 02), committed by the telegram trigger. */
  deliver(t: Telegram, after: number | null, resent: boolean): Promise<void> {
    return this.deps.receive(t.type, {
      seq: t.seq,
      after,
      message: this.wire.sorterMessageOf(t),
      arrivedAt: t.arrivedAt ?? performance.now(),
      resent,
    });
  }

  /** A commit that failed for a reason a resend would meet again (db/lasting-failure.ts). */
  lastingFailure(err: unknown): { numbering: boolean; reason: string } | null {
    return lastingFailure(err);
  }

  /** Committed before any message of the new session (the writer keeps the order of writes). */
  peerSession(epoch: string, lastSeqIn: number): void {
    this.deps.setPeerSession(epoch, lastSeqIn).catch((err) => this.deps.log.error({ err }, "could not store the sorter's new session"));
  }

  /** An assignment older than its time to live is of no use to the sorter: drop it, say so. */
  private expired(entry: OutboxEntry, nowMs: number): boolean {
    if (entry.message.kind !== 'ASSIGNMENT') return false;
    const ageS = this.ageOf(entry) / 1000;
    if (ageS <= this.deps.assignmentTtlSeconds) return false;
    const reason = `older than AssignmentTtlSeconds (${Math.round(ageS)} s)`;
    this.drop(entry, reason, new Date(nowMs).toISOString());
    this.deps.log.warn({ outboxId: entry.id, trackId: entry.message.body.TrackID, reason }, 'assignment dropped, not sent');
    return true;
  }

  /** An assignment's age in ms: on the clock that never steps, from when this process first saw it (`createdMono`). */
  private ageOf(entry: OutboxEntry): number {
    const now = this.monotonicMs();
    let created = this.createdMono.get(entry.id);
    if (created === undefined) {
      // A creation time ahead of the wall clock (it stepped back since): no age yet.
      created = now - Math.max(0, this.deps.clock().getTime() - Date.parse(entry.createdAt));
      this.createdMono.set(entry.id, created);
    }
    return now - created;
  }

  /** The entry's telegram; one the sorter's layout cannot carry (a value wider than its field, a type it lacks) is dropped, never cut. */
  private encoded(entry: OutboxEntry, nowMs: number): OutboundTelegram | null {
    const ready = this.encodedOnOffer.get(entry);
    if (ready) return ready;
    try {
      return this.wire.outboundData(entry.message);
    } catch (err) {
      if (!(err instanceof TelegramError)) throw err;
      const reason = `layout ${this.wire.layout.name} cannot carry it: ${err.message}`;
      this.drop(entry, reason, new Date(nowMs).toISOString());
      this.deps.log.warn({ outboxId: entry.id, kind: entry.message.kind, reason }, 'outbox entry dropped, not sent');
      return null;
    }
  }

  /** The listener of an entry, forgotten. */
  private told(id: number): (() => void) | undefined {
    const listener = this.listeners.get(id);
    if (listener) this.listeners.delete(id);
    return listener;
  }

  /** Move an entry to outbox_dropped (committed in the background; a repeat of the drop after a resync is harmless). */
  private drop(entry: OutboxEntry, reason: string, at: string): void {
    this.told(entry.id);
    this.createdMono.delete(entry.id);
    this.deps
      .dropFromOutbox(entry, reason, at)
      .catch((err) => this.deps.log.error({ err, outboxId: entry.id }, 'could not move an outbox entry to outbox_dropped'));
  }
}
