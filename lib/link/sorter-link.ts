// The service's link to the sorter (docs/sorter-protocol.md): a TCP client around the telegram
// session engine, with the outbox as its outbound side and commit-before-ACK as its inbound side.
import net from 'node:net';
import type { LinkReads } from '../../db/link-store';
import type { OutboxEntry } from '../../db/outbox-store';
import type { SorterSettings } from '../process/config';
import { ThrottledLog } from '../process/log-throttle';
import { Recent } from './recent';
import type { Logger } from '../process/logger';
import type { DeliveryState, OutboundMessage } from '../../model/messages';
import type { TelegramType } from '../telegram/telegram';
import { type OutboundEncoding, type OutboundTelegram, type TelegramWire, defaultWire } from '../layout/wire';
import type { TrafficLogWriter } from './traffic-log';
import { OutboxFeed, type OutboxFeedDeps, seqOfOutboxId } from './outbox-feed';
import { TelegramSession, tickWriter } from './session';
import { HOST_RECEIVES, type InboundMessage } from './session-port';
import { type SorterLink, type SorterLinkStatus, type TelegramSeen, linkStatus } from './sorter-link-status';
import { timerAt } from '../host/beat';

export type { InboundMessage } from './session-port';

/** How many times each kind of telegram goes round the codec before the link connects (TelegramWire.rehearse). */
const REHEARSAL_ROUNDS = 20;
/** The first reconnect comes this soon; each further attempt without a valid telegram doubles it. */
const INITIAL_BACKOFF_MS = 200;

/**
 * The session's timers are one timeout, armed for the next moment something is due (a resend, our
 * LIFE, the dead-peer rule) rather than a tick every quarter of the ACK timeout, which woke an
 * idle service four times a second; never sooner than this (ms) after the last.
 */
const MIN_TICK_MS = 20;

/** How many of the latest telegrams the link remembers for the dashboard. */
const RECENT_TELEGRAMS = 20;

/** What the TCP link needs from the rest of the service. Writes resolve once committed. */
export interface TcpLinkDeps {
  settings: SorterSettings;
  outbox: OutboxFeedDeps['outbox'];
  links: LinkReads & {
    setPeerSession(peer: string, epoch: string, lastSeqIn: number, at: string): Promise<void>;
    dropFromOutbox: OutboxFeedDeps['dropFromOutbox'];
  };
  log: Logger;
  /** The wall clock: the times the link shows and logs. */
  clock: () => Date;
  /**
   * What the link times by, in ms: heartbeats, resends, a dead link (default: `clock`). The service
   * gives `steadyWallMs`, so that a step of the system clock neither takes the link for dead nor
   * stops its heartbeats and resends for as long as the step.
   */
  steadyMs?: () => number;
  /** The telegram trigger (manifest.json): commit a message from the sorter; resolves once committed. */
  receive(type: TelegramType, event: InboundMessage): Promise<void>;
  traffic?: TrafficLogWriter;
  /** The sorter's telegram layout (Sorter.Layout; default: protocol version 1). */
  wire?: TelegramWire;
  /** The service's run before this one stopped cleanly: its first resynchronisation's resends are not marked. */
  lastStopClean?: boolean;
}

/**
 * The wall clock as it read when the process started, advanced by the time since (a clock that
 * never steps; slewed with the wall clock, equal to it until the system clock is set). NTP setting
 * the clock of a box that started without a battery-backed one steps it by hours or months: timed
 * by the wall clock, the link then took itself for dead (set forward), or sent no heartbeat or
 * resend and looked for no dead link until the clock caught up again (set back).
 */
export const steadyWallMs = (): number => performance.timeOrigin + performance.now();

/**
 * The live link: one TCP connection to the PLC, reconnected with a capped backoff. Inbound data
 * is committed before it is acknowledged; outbound data comes from the outbox in order and
 * leaves it only on the sorter's ACK.
 */
export class TcpSorterLink implements SorterLink {
  private socket: net.Socket | null = null;
  private stopping = false;
  /** Connected or disconnected since (ms, the link's clock: the alarms count SORTER_LINK_DOWN from it), null: never connected yet. */
  private sinceAt: number | null = null;
  private backoffMs = INITIAL_BACKOFF_MS;
  /** The peer sent a valid telegram on this connection: only that resets the backoff (a gateway accepts for a PLC that is off). */
  private proven = false;
  /** A peer that accepts and says nothing is logged once, until it speaks. */
  private silentLogged = false;
  private readonly wire: TelegramWire;
  /** Connections made after the first one; connections that were up and dropped; attempts that never connected. */
  private readonly connections = { made: 0, lost: 0, failedAttempts: 0 };
  /** Why the last connection attempt failed (ECONNREFUSED, EHOSTUNREACH, ...). */
  private lastError: string | null = null;
  private readonly unreachable: ThrottledLog;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private started = false;
  /** The armed tick's clear (timerAt: one that Node fires early waits out the rest). */
  private clearTick: (() => void) | null = null;
  /** When the armed tick fires (ms, the link's clock). */
  private tickAt = Infinity;
  private readonly feed: OutboxFeed;
  private readonly session: TelegramSession<OutboxEntry>;
  /** Why the sorter's telegrams are refused for good (a failure that will not heal by itself), null while they are not. */
  private refusing: string | null = null;
  private readonly recent = new Recent<{ atMs: number; direction: 'IN' | 'OUT'; content: string }>(RECENT_TELEGRAMS);

  /** The link's clock in ms (deps.steadyMs, else deps.clock), for the session, the logs' periods and the tick. */
  private readonly nowMs: () => number;
  /** A time of the link's clock on the wall clock, for what the link shows and logs. */
  private readonly wallOf: (ms: number) => number;

  constructor(private readonly deps: TcpLinkDeps) {
    const s = deps.settings;
    const { log, clock } = deps;
    const steady = deps.steadyMs;
    this.nowMs = steady ?? (() => clock().getTime());
    this.wallOf = steady ? (ms) => clock().getTime() - (steady() - ms) : (ms) => ms;
    const now = this.nowMs;
    // Faults that repeat per telegram (a full disk, a sender gone wrong) log once a period.
    this.unreachable = new ThrottledLog(log, 'warn', 60_000, now);
    const storeFailed = new ThrottledLog(log, 'error', 10_000, now);
    const naksSent = new ThrottledLog(log, 'warn', 10_000, now);
    const garbage = new ThrottledLog(log, 'warn', 10_000, now);
    const stored = deps.links.session(s.PeerName);
    if (!stored) throw new Error(`no link session with ${s.PeerName} in the database`);
    this.wire = deps.wire ?? defaultWire();
    const timing = this.wire.settings({ heartbeatMs: s.HeartbeatMs, ackTimeoutMs: s.AckTimeoutMs, window: s.Window });
    this.feed = new OutboxFeed({
      outbox: deps.outbox,
      dropFromOutbox: deps.links.dropFromOutbox,
      epoch: stored.ourEpoch,
      receive: deps.receive,
      setPeerSession: (epoch, lastSeqIn) => deps.links.setPeerSession(s.PeerName, epoch, lastSeqIn, clock().toISOString()),
      assignmentTtlSeconds: s.AssignmentTtlSeconds,
      maxOffered: 4 * s.Window,
      log,
      clock,
      wire: this.wire,
    });
    this.session = new TelegramSession<OutboxEntry>(
      { name: s.Name, peerName: s.PeerName, receives: HOST_RECEIVES, peerKind: 'sorter' },
      timing,
      this.feed,
      now,
      {
        garbage: (bytes, reason) =>
          garbage.write({ bytes: JSON.stringify(bytes.slice(0, 60)), reason }, 'garbage on the sorter link skipped'),
        telegram: (direction, content, atMs) => {
          const at = this.wallOf(atMs);
          this.recent.add({ atMs: at, direction, content });
          deps.traffic?.write(new Date(at), direction, content);
        },
        nakSent: (seq, type, code, why) => naksSent.write({ seq, type, code, why }, `NAK sent to the sorter: ${why}`),
        nakReceived: (seq, type, code, text) => log.warn({ seq, type, code, text }, 'NAK received from the sorter'),
        newPeerSession: (epoch, nextSeq) => log.info({ peer: s.PeerName, epoch, nextSeq }, 'sorter announced a new session'),
        storeFailed: (seq, err) =>
          storeFailed.write(
            { err, seq },
            `could not store a sorter message; NAK ${this.wire.codes.CannotStore}, the sorter sends it again`,
          ),
        validTelegram: () => this.peerProven(),
        refusing: (reason, code) => this.refused(reason, code),
      },
      { epoch: stored.peerEpoch, lastSeqIn: stored.lastSeqIn, lastStopClean: deps.lastStopClean },
    );
  }

  /**
   * Connect, and keep reconnecting until stopped. Called once, when the rest of the service is
   * ready for the first telegram; before it connects, each kind of telegram goes round the codec
   * (TelegramWire.rehearse), so that the first parcel does not wait for V8 to compile it.
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { settings: s, log } = this.deps;
    const began = performance.now();
    const telegrams = this.wire.rehearse({ name: s.Name, peerName: s.PeerName }, REHEARSAL_ROUNDS);
    log.debug({ telegrams, ms: Math.round(performance.now() - began) }, 'sorter link: codec rehearsed');
    this.connect();
  }

  private get address() {
    return `${this.deps.settings.Host}:${this.deps.settings.Port}`;
  }

  recentTelegrams(): TelegramSeen[] {
    return this.recent.list().map((t) => ({ At: new Date(t.atMs).toISOString(), Direction: t.direction, Telegram: t.content }));
  }

  status(): SorterLinkStatus {
    const { connected, lastInAt, lastOutAt, counters, inFlight } = this.session;
    const dropped = { assignments: this.deps.links.droppedCount('ASSIGNMENT'), settings: this.deps.links.droppedCount('DESTINATION') };
    return linkStatus({
      connected,
      address: this.address,
      since: this.sinceAt === null ? null : new Date(this.wallOf(this.sinceAt)).toISOString(),
      lastInAt: lastInAt > 0 ? this.wallOf(lastInAt) : 0,
      lastOutAt: lastOutAt > 0 ? this.wallOf(lastOutAt) : 0,
      counters,
      connections: this.connections,
      dropped,
      inFlight,
      refusing: this.refusing,
    });
  }

  offer(entry: OutboxEntry, acknowledged?: () => void, telegram?: OutboundTelegram): DeliveryState {
    this.feed.offer(entry, this.session.connected, acknowledged, telegram);
    this.session.pump();
    this.armTick();
    return this.session.inFlightRef(seqOfOutboxId(entry.id, this.wire.maxSequence))?.id === entry.id ? 'Sent' : 'Queued';
  }

  acknowledgesPromptly(): boolean {
    return this.session.connected && this.wire.acks;
  }

  encode(message: OutboundMessage): OutboundEncoding {
    return this.wire.encodeOutbound(message);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.clearTick?.();
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

  private connect(): void {
    if (this.stopping) return;
    const { Host, Port } = this.deps.settings;
    const socket = net.connect({ host: Host, port: Port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    this.socket = socket;
    socket.on('connect', () => this.onConnect(socket));
    socket.on('data', (chunk) => {
      if (socket !== this.socket) return;
      this.session.receive(chunk, performance.now());
      this.armTick();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.lastError = err.code ?? err.message;
      this.deps.log.debug({ err: err.message, address: this.address }, 'sorter link error');
    });
    socket.on('close', () => this.onClose(socket));
  }

  private onConnect(socket: net.Socket): void {
    if (socket !== this.socket) return;
    this.sinceAt = this.nowMs();
    this.proven = false;
    this.connections.made += 1;
    const failed = this.unreachable.reset();
    // While a peer accepts and says nothing, each of its connections is a debug line (it was logged once).
    this.deps.log[this.silentLogged ? 'debug' : 'info'](
      { address: this.address, ...(failed > 0 && { failedAttemptsBefore: failed }) },
      'sorter link connected; resynchronising',
    );
    this.session.attach(tickWriter(socket));
    this.armTick();
  }

  private onClose(socket: net.Socket): void {
    if (socket !== this.socket) return;
    const wasUp = this.session.connected;
    if (wasUp && !this.proven) this.silentPeer();
    if (wasUp) {
      this.deps.log[this.proven || !this.silentLogged ? 'warn' : 'debug'](
        { address: this.address },
        'sorter link lost; unacknowledged telegrams stay in the outbox',
      );
      this.sinceAt = this.nowMs();
    }
    this.session.detach();
    this.socket = null;
    if (this.stopping) return;
    if (wasUp) this.connections.lost += 1;
    else {
      this.connections.failedAttempts += 1;
      this.unreachable.write(
        { address: this.address, attempts: this.connections.failedAttempts, error: this.lastError },
        `cannot reach the sorter at ${this.address} (${this.lastError ?? 'connection closed'}); trying again, up to every ${this.deps.settings.ReconnectMaxMs} ms (this line at most once a minute while it lasts)`,
      );
    }
    this.reconnectTimer = setTimeout(() => this.connect(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.deps.settings.ReconnectMaxMs);
  }

  private tick(): void {
    this.clearTick = null;
    this.tickAt = Infinity;
    if (this.session.tick() === 'dead') {
      this.deps.log[this.proven ? 'warn' : 'debug'](
        { silentMs: this.nowMs() - this.session.lastInAt },
        'sorter link silent for 3 heartbeats: declared dead, reconnecting',
      );
      this.socket?.destroy();
      return;
    }
    this.armTick();
  }

  /**
   * Arm the tick for the session's next deadline, unless it is armed for sooner already. Called
   * after whatever may bring one closer (a connection, a telegram in flight): cheap when it does not.
   */
  private armTick(): void {
    if (this.stopping) return;
    const due = this.session.nextDueAt();
    if (due >= this.tickAt || due === Infinity) return;
    this.clearTick?.();
    this.tickAt = Math.max(due, this.nowMs() + MIN_TICK_MS);
    this.clearTick = timerAt(this.tickAt, () => this.tick(), this.nowMs);
  }

  /**
   * The sorter's telegrams are refused for good for `reason` (null: one was kept again). Said once
   * when it starts and once when it ends, however many telegrams it refuses meanwhile.
   */
  private refused(reason: string | null, nakCode?: number): void {
    if (reason !== null)
      this.deps.log.error(
        { peer: this.deps.settings.PeerName, reason, nakCode },
        `the sorter's telegrams are refused, not stored: ${reason}; this will not pass by itself (the sorter gets a NAK that says so, not ${this.wire.codes.CannotStore}), see /status Sorter.RefusingBecause`,
      );
    else if (this.refusing !== null) this.deps.log.info({ peer: this.deps.settings.PeerName }, "the sorter's telegrams are stored again");
    this.refusing = reason;
  }

  /** A valid telegram came in: the peer speaks the protocol, and the next reconnect may be quick again. */
  private peerProven(): void {
    if (this.proven) return;
    this.proven = true;
    this.backoffMs = INITIAL_BACKOFF_MS;
    if (this.silentLogged) this.deps.log.info({ address: this.address }, 'sorter link: the sorter answers again');
    this.silentLogged = false;
  }

  /** A connection ended without one valid telegram from the peer: said once, and the backoff keeps growing. */
  private silentPeer(): void {
    if (this.silentLogged) return;
    this.silentLogged = true;
    this.deps.log.warn(
      { address: this.address, cause: 'connection accepted, no valid telegram received', layout: this.wire.layout.name },
      `sorter link: ${this.address} accepts the connection but sends no valid ${this.wire.layout.name} telegram (a gateway in front of a PLC that is off, or another layout); reconnecting with a backoff growing to Sorter.ReconnectMaxMs (${this.deps.settings.ReconnectMaxMs} ms). Logged once until the sorter answers`,
    );
  }
}
