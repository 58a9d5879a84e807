import net from 'node:net';
import type { LinkReads, PeerSession } from '../db/link-store';
import type { OutboxEntry, OutboxReads } from '../db/outbox-store';
import type { SorterSettings } from './config';
import type { Logger } from './logger';
import type { SorterMessage } from './messages';
import {
  MAX_SEQUENCE,
  NakReason,
  type Telegram,
  TelegramError,
  type TelegramType,
  decodeData,
  encodeContent,
  encodeData,
  nakData,
  outboundData,
  parseContent,
  parseNak,
  sorterMessageOf,
} from './telegram';
import { TelegramDecoder } from './telegram-decoder';
import type { TrafficLogWriter } from './traffic-log';

/** What GET /status shows of the link to the sorter. */
export interface SorterLinkStatus {
  Connected: boolean;
  Address: string | null;
  /** Connected or disconnected since (null: never connected yet). */
  Since: string | null;
  LastTelegramIn: string | null;
  LastTelegramOut: string | null;
  [counter: string]: unknown;
}

/** How a POSTed message travels on: written to the sorter, waiting in the outbox, or not at all (test mode). */
export type DeliveryState = 'Sent' | 'Queued' | 'NotSent';

/** The service's side of the link to the sorter, as the handlers see it. */
export interface SorterLink {
  status(): SorterLinkStatus;
  /** A new outbox entry is committed: send what the link can now. Says how that entry travels. */
  offer(entry: OutboxEntry): DeliveryState;
  stop(): Promise<void>;
}

/** The link in test mode: nothing is connected and nothing is sent. */
export function offlineLink(address: string | null): SorterLink {
  return {
    status: () => ({ Connected: false, Address: address, Since: null, LastTelegramIn: null, LastTelegramOut: null }),
    offer: () => 'Queued',
    stop: async () => {},
  };
}

/** Outbound data telegrams are numbered by their outbox id, so a resend after a restart keeps its number. */
export const seqOfOutboxId = (id: number) => ((id - 1) % MAX_SEQUENCE) + 1;

/** Numbers within this distance at or before the last accepted one are repeats, not new telegrams. */
const REPEAT_WINDOW = 100_000;

/** True if `seq` was already accepted when `last` was the last accepted number (0 = none yet). */
export function isRepeat(seq: number, last: number): boolean {
  if (last === 0) return false;
  return (last - seq + MAX_SEQUENCE) % MAX_SEQUENCE < REPEAT_WINDOW;
}

/** What the TCP link needs from the rest of the service. Writes resolve once committed. */
export interface TcpLinkDeps {
  settings: SorterSettings;
  outbox: OutboxReads & { remove(id: number): Promise<boolean> };
  links: LinkReads & {
    setPeerSession(peer: string, epoch: string, lastSeqIn: number, at: string): Promise<void>;
    drop(entry: OutboxEntry, reason: string, at: string): Promise<void>;
  };
  log: Logger;
  clock: () => Date;
  /**
   * Commit a message from the sorter with its sequence number, only if the last number stored is
   * `after`, and wake waiting clients; resolves once committed. `arrivedAt` is performance.now()
   * of its arrival.
   */
  accept(seq: number, after: number, message: SorterMessage, arrivedAt: number): Promise<void>;
  traffic?: TrafficLogWriter;
}

interface InFlight {
  entry: OutboxEntry;
  sentAt: number;
}

/**
 * The live link (docs/sorter-protocol.md): one TCP connection to the PLC, reconnected with a
 * capped backoff. Inbound data is committed before it is acknowledged; outbound data comes
 * from the outbox in order, at most `Window` unacknowledged, resent with the same number after
 * `AckTimeoutMs` and after every reconnect, and leaves the outbox only on the sorter's ACK.
 */
export class TcpSorterLink implements SorterLink {
  private socket: net.Socket | null = null;
  private connected = false;
  private stopping = false;
  private since: string | null = null;
  private decoder = new TelegramDecoder();
  private readonly inflight = new Map<number, InFlight>();
  private lastSentId = 0;
  /** Entries offered since the last read, in id order: sent from here without reading them back. */
  private offered: OutboxEntry[] = [];
  /** The newest outbox id known to exist (offered, or found at connect): past it, nothing to read. */
  private newestId = 0;
  private resyncUntilId = 0;
  private resyncing = false;
  /** The sorter's session id, as last announced (and committed or being committed). */
  private peerEpoch: string | null = null;
  private sessionLoaded = false;
  /** Counts the sorter's new sessions: a commit from an earlier one must not move today's numbers. */
  private sessionGen = 0;
  /** Last number accepted, counting those whose commit is still under way. */
  private lastSeqIn = 0;
  /** Last number whose commit has completed. */
  private committedSeqIn = 0;
  private arrivedAt = 0;
  private lastInMs = 0;
  private lastOutMs = 0;
  private lastIn: string | null = null;
  private lastOut: string | null = null;
  private backoffMs = 200;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly ticker: NodeJS.Timeout;
  private readonly counters = { TelegramsIn: 0, TelegramsOut: 0, Resends: 0, NaksSent: 0, NaksReceived: 0, DuplicatesReceived: 0, GarbageBytes: 0, Reconnects: 0 };

  constructor(private readonly deps: TcpLinkDeps) {
    const s = deps.settings;
    this.ticker = setInterval(() => this.tick(), Math.max(20, Math.min(s.HeartbeatMs, s.AckTimeoutMs) / 4));
    this.ticker.unref();
    this.connect();
  }

  private get address() {
    return `${this.deps.settings.Host}:${this.deps.settings.Port}`;
  }

  status(): SorterLinkStatus {
    return {
      Connected: this.connected,
      Address: this.address,
      Since: this.since,
      LastTelegramIn: this.lastIn,
      LastTelegramOut: this.lastOut,
      ...this.counters,
      DroppedAssignments: this.deps.links.droppedCount('ASSIGNMENT'),
      DroppedSettings: this.deps.links.droppedCount('DESTINATION'),
      InFlight: this.inflight.size,
    };
  }

  offer(entry: OutboxEntry): DeliveryState {
    this.newestId = Math.max(this.newestId, entry.id);
    // Kept only while connected (a reconnect reads the table anyway), and only a window's worth.
    if (this.connected && this.offered.length < 4 * this.deps.settings.Window) this.offered.push(entry);
    this.pump();
    return this.inflight.get(seqOfOutboxId(entry.id))?.entry.id === entry.id ? 'Sent' : 'Queued';
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.ticker);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const socket = this.socket;
    if (socket) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.end();
        setTimeout(() => socket.destroy(), 500).unref();
      });
    }
  }

  // ---- connection ----

  private connect(): void {
    if (this.stopping) return;
    const { Host, Port } = this.deps.settings;
    const socket = net.connect({ host: Host, port: Port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    this.socket = socket;
    socket.on('connect', () => this.onConnect(socket));
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (err) => this.deps.log.debug({ err: err.message, address: this.address }, 'sorter link error'));
    socket.on('close', () => this.onClose(socket));
  }

  /** Our session with the sorter, as committed (the service creates it before the link starts). */
  private session(): PeerSession {
    const peer = this.deps.settings.PeerName;
    const session = this.deps.links.session(peer);
    if (!session) throw new Error(`no link session with ${peer} in the database`);
    return session;
  }

  private onConnect(socket: net.Socket): void {
    if (socket !== this.socket) return;
    const now = this.deps.clock();
    this.connected = true;
    this.since = now.toISOString();
    this.lastInMs = this.lastOutMs = now.getTime();
    this.backoffMs = 200;
    this.decoder = new TelegramDecoder();
    this.inflight.clear();
    this.lastSentId = 0;
    const session = this.session();
    // From the database once; afterwards the numbering in memory is ahead of it by the commits
    // still under way, which complete in order.
    if (!this.sessionLoaded) {
      this.sessionLoaded = true;
      this.peerEpoch = session.peerEpoch;
      this.lastSeqIn = this.committedSeqIn = session.lastSeqIn;
    }
    this.deps.log.info({ address: this.address }, 'sorter link connected; resynchronising');
    // Resynchronisation: our session and first number, then everything not yet acknowledged
    // (in order, same numbers), then SYNE.
    const [first] = this.deps.outbox.peek(1);
    this.resyncUntilId = this.deps.outbox.lastId();
    this.newestId = Math.max(this.newestId, this.resyncUntilId);
    this.resyncing = true;
    this.send('SYNS', 0, 'D', encodeData('SYNS', { Epoch: session.ourEpoch, NextSeq: first ? seqOfOutboxId(first.id) : 0 }));
    this.pump();
  }

  private onClose(socket: net.Socket): void {
    if (socket !== this.socket) return;
    if (this.connected) {
      this.deps.log.warn({ address: this.address }, 'sorter link lost; unacknowledged telegrams stay in the outbox');
      this.since = this.deps.clock().toISOString();
    }
    this.connected = false;
    this.socket = null;
    this.inflight.clear();
    this.offered = [];
    if (this.stopping) return;
    this.counters.Reconnects += 1;
    this.reconnectTimer = setTimeout(() => this.connect(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.deps.settings.ReconnectMaxMs);
  }

  // ---- sending ----

  private send(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void {
    const socket = this.socket;
    if (!socket || !this.connected) return;
    const content = encodeContent({ sender: this.deps.settings.Name, receiver: this.deps.settings.PeerName, seq, type, flag, data });
    const now = this.deps.clock();
    // The telegrams of one tick (the ACKs for a chunk, the assignments they let through) leave in
    // one write: corked now, uncorked once this tick's work is done.
    if (socket.writableCorked === 0) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
    socket.write(`\x02${content}\x03`, 'latin1');
    this.deps.traffic?.write(now, 'OUT', content);
    this.lastOutMs = now.getTime();
    this.lastOut = now.toISOString();
    this.counters.TelegramsOut += 1;
  }

  private nak(seq: number, type: TelegramType, code: number, why: string): void {
    this.counters.NaksSent += 1;
    this.deps.log.warn({ seq, type, code, why }, `NAK sent to the sorter: ${why}`);
    this.send(type, seq, 'N', nakData(code, why));
  }

  /** An assignment older than its time to live is of no use to the sorter: drop it, say so. */
  private expired(entry: OutboxEntry, nowMs: number): boolean {
    if (entry.message.kind !== 'ASSIGNMENT') return false;
    const ageS = (nowMs - Date.parse(entry.createdAt)) / 1000;
    if (ageS <= this.deps.settings.AssignmentTtlSeconds) return false;
    const reason = `older than AssignmentTtlSeconds (${Math.round(ageS)} s)`;
    this.drop(entry, reason, new Date(nowMs).toISOString());
    this.deps.log.warn({ outboxId: entry.id, trackId: entry.message.body.TrackID, reason }, 'assignment dropped, not sent');
    return true;
  }

  /** Move an entry to outbox_dropped (committed in the background; a repeat of the drop after a resync is harmless). */
  private drop(entry: OutboxEntry, reason: string, at: string): void {
    this.deps.links.drop(entry, reason, at).catch((err) => this.deps.log.error({ err, outboxId: entry.id }, 'could not move an outbox entry to outbox_dropped'));
  }

  private transmit(entry: OutboxEntry): void {
    const { type, data } = outboundData(entry.message);
    this.send(type, seqOfOutboxId(entry.id), 'D', data);
  }

  /**
   * Send outbox entries after the last one sent, up to the window. The outbox is read only when
   * it holds something newer than what was sent (every entry is offered once committed), or
   * when `look` asks (the periodic tick: a safety net for entries nobody offered).
   */
  private pump(look = false): void {
    if (!this.connected) return;
    const nowMs = this.deps.clock().getTime();
    while (this.inflight.size < this.deps.settings.Window && (look || this.lastSentId < this.newestId)) {
      look = false;
      const room = this.deps.settings.Window - this.inflight.size;
      // Outbox ids are consecutive (AUTOINCREMENT, and a rolled-back insert takes none): entries
      // offered right after the last one sent need no read; anything else (a resync, rows
      // written by another process) is read from the table in order.
      while (this.offered.length > 0 && this.offered[0].id <= this.lastSentId) this.offered.shift();
      const entries: OutboxEntry[] = [];
      for (let id = this.lastSentId + 1; entries.length < room && this.offered[0]?.id === id; id++) entries.push(this.offered.shift()!);
      if (entries.length === 0) entries.push(...this.deps.outbox.after(this.lastSentId, room));
      if (entries.length === 0) break;
      this.newestId = Math.max(this.newestId, entries[entries.length - 1].id);
      for (const entry of entries) {
        this.lastSentId = entry.id;
        if (this.expired(entry, nowMs)) continue;
        this.transmit(entry);
        this.inflight.set(seqOfOutboxId(entry.id), { entry, sentAt: nowMs });
      }
    }
    if (this.resyncing && this.lastSentId >= this.resyncUntilId) {
      this.resyncing = false;
      this.send('SYNE', 0, 'D', '');
    }
  }

  // ---- receiving ----

  private onData(chunk: Buffer): void {
    const now = this.deps.clock();
    this.arrivedAt = performance.now();
    this.lastInMs = now.getTime();
    for (const item of this.decoder.push(chunk)) {
      if (item.kind === 'garbage') {
        this.counters.GarbageBytes += item.bytes.length;
        this.deps.log.warn({ bytes: JSON.stringify(item.bytes.slice(0, 60)), reason: item.reason }, 'garbage on the sorter link skipped');
        continue;
      }
      this.counters.TelegramsIn += 1;
      this.lastIn = now.toISOString();
      this.deps.traffic?.write(now, 'IN', item.content);
      this.onTelegram(item.content);
    }
  }

  private onTelegram(content: string): void {
    let t: Telegram;
    try {
      t = parseContent(content);
    } catch (err) {
      const seq = /^\d{6}$/.test(content.slice(16, 22)) ? Number(content.slice(16, 22)) : 0;
      this.nak(seq, 'LIFE', NakReason.MALFORMED, (err as Error).message);
      return;
    }
    if (t.flag === 'A') return this.onAck(t);
    if (t.flag === 'N') return this.onNak(t);
    switch (t.type) {
      case 'LIFE':
      case 'SYNE':
        return this.send(t.type, t.seq, 'A', '');
      case 'SYNS':
        return this.onSyncStart(t);
      case 'REQU':
      case 'VERI':
      case 'SCAN':
        return this.onMessage(t);
      default:
        return this.nak(t.seq, t.type, NakReason.UNEXPECTED, `${t.type} is not sent by a sorter`);
    }
  }

  private onSyncStart(t: Telegram): void {
    let f: Record<string, unknown>;
    try {
      f = decodeData('SYNS', t.data);
    } catch (err) {
      return this.nak(t.seq, 'SYNS', NakReason.BAD_DATA, (err as Error).message);
    }
    const peer = this.deps.settings.PeerName;
    if (f.Epoch !== this.peerEpoch) {
      // A new session of the sorter (e.g. it restarted): its numbering starts afresh. Committed
      // before any message of the new session (the writer keeps the order of writes).
      const next = f.NextSeq as number;
      this.peerEpoch = f.Epoch as string;
      this.sessionGen += 1;
      this.lastSeqIn = this.committedSeqIn = next > 1 ? next - 1 : 0;
      this.deps.links
        .setPeerSession(peer, this.peerEpoch, this.lastSeqIn, this.deps.clock().toISOString())
        .catch((err) => this.deps.log.error({ err, peer }, "could not store the sorter's new session"));
      this.deps.log.info({ peer, epoch: f.Epoch, nextSeq: next }, 'sorter announced a new session');
    }
    this.send('SYNS', t.seq, 'A', '');
  }

  private onMessage(t: Telegram): void {
    let message: SorterMessage;
    try {
      message = sorterMessageOf(t);
    } catch (err) {
      const why = err instanceof TelegramError ? err.message : String(err);
      return this.nak(t.seq, t.type, NakReason.BAD_DATA, why);
    }
    if (isRepeat(t.seq, this.lastSeqIn)) {
      this.counters.DuplicatesReceived += 1;
      // Committed already (our ACK was lost or late): acknowledge again, queue nothing. Still
      // being committed (a slow disk): the ACK follows that commit, never before it.
      if (isRepeat(t.seq, this.committedSeqIn)) this.send(t.type, t.seq, 'A', '');
      return;
    }
    // Counted as accepted now, so a repeat arriving while the commit is under way is recognised;
    // acknowledged only once the commit is done. The commit succeeds only after its
    // predecessor's, so a failure cannot leave a gap that a later repeat would cover.
    const after = this.lastSeqIn;
    this.lastSeqIn = t.seq;
    const socket = this.socket;
    const gen = this.sessionGen;
    this.deps.accept(t.seq, after, message, this.arrivedAt).then(
      () => {
        if (gen === this.sessionGen) this.committedSeqIn = t.seq;
        if (this.socket === socket) this.send(t.type, t.seq, 'A', '');
      },
      (err) => {
        // Not stored: refuse it (code 04); the sorter sends it, and what follows, again after its
        // ACK timeout. Numbering goes back to the last committed message.
        this.deps.log.error({ err, seq: t.seq }, 'could not store a sorter message; NAK 04, the sorter sends it again');
        if (gen === this.sessionGen && isRepeat(t.seq, this.lastSeqIn)) this.lastSeqIn = this.committedSeqIn;
        if (this.socket === socket) this.nak(t.seq, t.type, NakReason.CANNOT_STORE, 'cannot store now, send again');
      },
    );
  }

  private onAck(t: Telegram): void {
    if (t.type !== 'ASGN' && t.type !== 'DSET') return;
    const item = this.inflight.get(t.seq);
    if (!item) return; // a late ACK for something already acknowledged
    this.inflight.delete(t.seq);
    // If this removal is lost in a crash, the entry is sent again and the sorter recognises the repeat.
    this.deps.outbox.remove(item.entry.id).catch((err) => this.deps.log.error({ err, outboxId: item.entry.id }, 'could not remove an acknowledged outbox entry'));
    this.pump();
  }

  private onNak(t: Telegram): void {
    this.counters.NaksReceived += 1;
    const { code, text } = parseNak(t.data);
    this.deps.log.warn({ seq: t.seq, type: t.type, code, text }, 'NAK received from the sorter');
    if (t.type !== 'ASGN' && t.type !== 'DSET') return;
    const item = this.inflight.get(t.seq);
    if (!item || code === NakReason.CANNOT_STORE) return; // resent after AckTimeoutMs
    this.inflight.delete(t.seq);
    this.drop(item.entry, `NAK ${code}: ${text}`, this.deps.clock().toISOString());
    this.pump();
  }

  // ---- timers ----

  private tick(): void {
    if (!this.connected || !this.socket) return;
    const s = this.deps.settings;
    const nowMs = this.deps.clock().getTime();
    if (nowMs - this.lastInMs > 3 * s.HeartbeatMs) {
      this.deps.log.warn({ silentMs: nowMs - this.lastInMs }, 'sorter link silent for 3 heartbeats: declared dead, reconnecting');
      this.socket.destroy();
      return;
    }
    const [oldest] = this.inflight.values();
    if (oldest && nowMs - oldest.sentAt > s.AckTimeoutMs) {
      for (const [seq, item] of [...this.inflight]) {
        if (this.expired(item.entry, nowMs)) {
          this.inflight.delete(seq);
          continue;
        }
        this.transmit(item.entry);
        item.sentAt = nowMs;
        this.counters.Resends += 1;
      }
    }
    this.pump(true);
    if (nowMs - this.lastOutMs > s.HeartbeatMs) this.send('LIFE', 0, 'D', '');
  }
}
