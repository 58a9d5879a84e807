// The emulated PLC's end of the sorter link: a TCP server around the telegram session engine
// (lib/link/session.ts), with the fault switches that tests and demos use.
import crypto from 'node:crypto';
import net from 'node:net';
import { TelegramSession } from '../lib/link/session';
import { type Outbound, PLC_RECEIVES, RefuseError, type SessionCounters, zeroCounters } from '../lib/link/session-port';
import type { Telegram, TelegramType } from '../lib/telegram/telegram';
import { type TelegramWire, defaultWire } from '../lib/layout/wire';

/** How the emulated PLC misbehaves, for fault tests. All off by default. */
export interface Misbehaviour {
  /** Drop the connection every this many seconds (0 = never). */
  dropEverySeconds: number;
  /** After this many seconds, go silent (no ACK, no LIFE, nothing) for silentForSeconds, keeping the socket open. */
  silentAfterSeconds: number;
  silentForSeconds: number;
  /** Write garbage bytes before every Nth telegram (0 = never). */
  garbageEvery: number;
  /** Send every Nth data telegram twice (0 = never). */
  repeatEvery: number;
  /** Write every telegram one byte per socket write (TCP may deliver them one byte per read). */
  splitBytes: boolean;
  /**
   * Restart the PLC once, this many seconds after the start (0 = never): the connection drops, a
   * new session begins numbered from 1, and what the host had not acknowledged is kept and
   * numbered anew (a PLC whose send buffer survives its restart).
   */
  restartAfterSeconds: number;
}

/** The PLC side of the link: numbering, ACKs, resends, heartbeats, resynchronisation. */
export interface PlcLinkOptions {
  port: number;
  host?: string;
  name?: string;
  peerName?: string;
  heartbeatMs?: number;
  ackTimeoutMs?: number;
  window?: number;
  misbehave?: Partial<Misbehaviour>;
  /** A data telegram from the service (ASGN, DSET), already deduplicated. Return a NAK reason to refuse it. */
  onData(t: Telegram): void | { code: number; text: string };
  log?: (line: string) => void;
  /** The telegram layout the PLC speaks (default: protocol version 1). */
  wire?: TelegramWire;
  /** The number of the first data telegram (default 1): near Sequence.Last, a run wraps soon. */
  firstSeq?: number;
}

/** A data telegram for the host; its handle is its own number. */
type Pending = Outbound<number>;

/** The names of a session's counters (each a number). */
const counterNames = (c: SessionCounters) => Object.keys(c) as Array<keyof SessionCounters>;

/**
 * A TCP server that behaves like a sorter PLC's host interface: one client at a time, the
 * protocol run by the shared session engine. Telegrams produced while no host is connected are
 * kept and sent once one is.
 */
export class PlcLink {
  readonly server: net.Server;
  private socket: net.Socket | null = null;
  private epoch = crypto.randomBytes(6).toString('hex').toUpperCase();
  private nextSeq: number;
  /** Produced and not yet acknowledged, in order; the first `sent` of them went out since the connect. */
  private readonly pending: Pending[] = [];
  private sent = 0;
  private backlogUntil = 0;
  private connections = 0;
  private dataSent = 0;
  private framesSent = 0;
  private readonly startedMs = Date.now();
  private silentUntil = 0;
  private silenced = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private session: TelegramSession<number>;
  /** The counters of the sessions before the last restart. */
  private readonly earlier: SessionCounters = zeroCounters();
  private restarts = 0;
  private readonly timing: ReturnType<TelegramWire['settings']>;
  private readonly o: Required<Omit<PlcLinkOptions, 'misbehave' | 'log' | 'onData' | 'wire' | 'firstSeq'>> & { misbehave: Misbehaviour };
  /** The layout this PLC speaks: its telegrams' data are written and read with it. */
  readonly wire: TelegramWire;

  constructor(private readonly options: PlcLinkOptions) {
    this.o = {
      port: options.port,
      host: options.host ?? '127.0.0.1',
      name: options.name ?? 'PLC01',
      peerName: options.peerName ?? 'WCS01',
      heartbeatMs: options.heartbeatMs ?? 2000,
      ackTimeoutMs: options.ackTimeoutMs ?? 1000,
      window: options.window ?? 64,
      misbehave: {
        dropEverySeconds: 0,
        silentAfterSeconds: 0,
        silentForSeconds: 0,
        garbageEvery: 0,
        repeatEvery: 0,
        splitBytes: false,
        restartAfterSeconds: 0,
        ...options.misbehave,
      },
    };
    this.wire = options.wire ?? defaultWire();
    this.nextSeq = options.firstSeq ?? 1;
    const timing = (this.timing = this.wire.settings({
      heartbeatMs: this.o.heartbeatMs,
      ackTimeoutMs: this.o.ackTimeoutMs,
      window: this.o.window,
    }));
    this.session = this.newSession();
    this.server = net.createServer((socket) => this.onConnection(socket));
    this.timers.push(setInterval(() => this.tick(), Math.max(20, Math.min(timing.heartbeatMs, timing.ackTimeoutMs) / 4)));
    if (this.o.misbehave.dropEverySeconds > 0) {
      this.timers.push(setInterval(() => this.socket?.destroy(), this.o.misbehave.dropEverySeconds * 1000));
    }
    if (this.o.misbehave.restartAfterSeconds > 0)
      this.timers.push(setTimeout(() => this.restart(), this.o.misbehave.restartAfterSeconds * 1000));
  }

  /** The PLC's protocol engine as it starts: it knows nothing of the host's numbering. */
  private newSession(): TelegramSession<number> {
    return new TelegramSession<number>(
      { name: this.o.name, peerName: this.o.peerName, receives: PLC_RECEIVES, peerKind: 'host' },
      this.timing,
      {
        restart: () => {
          this.sent = 0;
          this.backlogUntil = this.pending.length;
          return { epoch: this.epoch, nextSeq: this.pending[0]?.seq ?? 0 };
        },
        nextOutbound: (max) => {
          const items = this.pending.slice(this.sent, this.sent + max);
          this.sent += items.length;
          return items;
        },
        backlogSent: () => this.sent >= this.backlogUntil,
        acknowledged: (seq) => this.forget(seq),
        refused: (seq, refusal) => {
          this.forget(seq);
          this.log(`host refused ${seq} for good: NAK ${refusal.code} ${refusal.text}`);
        },
        deliver: (t) => {
          const refused = this.options.onData(t);
          return refused ? Promise.reject(new RefuseError(refused.code, refused.text)) : Promise.resolve();
        },
      },
      () => Date.now(),
      { nakReceived: (seq, type, code, text) => this.log(`NAK from host for ${type} ${seq}: ${code} ${text}`) },
    );
  }

  /**
   * The PLC restarts: the connection drops, a new session (a new epoch where the layout
   * resynchronises) numbers from 1 again, the telegrams not yet acknowledged first.
   */
  restart(): void {
    const c = this.session.counters;
    for (const k of counterNames(c)) this.earlier[k] += c[k];
    this.restarts += 1;
    this.socket?.destroy();
    this.session.detach();
    this.epoch = crypto.randomBytes(6).toString('hex').toUpperCase();
    this.nextSeq = 1;
    for (const p of this.pending) {
      p.seq = p.ref = this.nextSeq;
      this.nextSeq = this.wire.nextSequence(this.nextSeq);
    }
    this.sent = this.backlogUntil = 0;
    this.session = this.newSession();
    this.log(`restarted: numbering from 1, ${this.pending.length} telegrams still to send`);
  }

  /** The run's counters, as the emulator reports them (EMULATOR {json}). */
  get counters() {
    const now = this.session.counters;
    const c = { ...now };
    for (const k of counterNames(now)) c[k] = now[k] + this.earlier[k];
    return {
      telegrams_in: c.telegramsIn,
      telegrams_out: c.telegramsOut,
      resends: c.resends,
      duplicates_received: c.duplicatesReceived,
      naks_sent: c.naksSent,
      naks_received: c.naksReceived,
      garbage_bytes_in: c.garbageBytes,
      connections: this.connections,
      restarts: this.restarts,
    };
  }

  /** Start listening; resolves with the port. */
  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.server.listen(this.o.port, this.o.host, () => {
        const address = this.server.address(); // an AddressInfo: it listens on a host and port
        resolve(typeof address === 'object' && address !== null ? address.port : this.o.port);
      }),
    );
  }

  /** Is a host connected? */
  get connected(): boolean {
    return this.socket !== null;
  }

  /** Telegrams produced and not yet acknowledged by the host. */
  get unacknowledged(): number {
    return this.pending.length;
  }

  /** The number of the oldest telegram not yet acknowledged (null: none). */
  get oldestUnacknowledged(): number | null {
    return this.pending[0]?.seq ?? null;
  }

  /** Queue a data telegram for the host; it is sent when the link and the window allow. */
  sendData(type: TelegramType, data: string): void {
    const seq = this.nextSeq;
    this.nextSeq = this.wire.nextSequence(seq);
    this.pending.push({ seq, type, data, ref: seq });
    if (!this.silent) this.session.pump();
  }

  /** Stop: close the connection and the server. */
  close(): Promise<void> {
    this.timers.forEach((t) => clearInterval(t));
    this.socket?.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private log(line: string) {
    this.options.log?.(line);
  }

  /** The host answered a telegram for good: it leaves the pending list. */
  private forget(seq: number): void {
    const i = this.pending.findIndex((p) => p.seq === seq);
    if (i < 0) return;
    this.pending.splice(i, 1);
    if (i < this.sent) this.sent -= 1;
    if (i < this.backlogUntil) this.backlogUntil -= 1;
  }

  private onConnection(socket: net.Socket): void {
    // One host at a time, as a PLC's interface allows: the newer connection wins.
    if (this.socket) this.socket.destroy();
    this.session.detach();
    socket.setNoDelay(true);
    this.socket = socket;
    this.connections += 1;
    this.log(`host connected from ${socket.remoteAddress}:${socket.remotePort}`);
    socket.on('data', (chunk) => {
      if (socket === this.socket && !this.silent && this.session.connected) this.session.receive(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.session.detach();
      this.log('host disconnected');
    });
    // A silent PLC does not run its protocol at all: it starts on this connection once it speaks again.
    if (!this.silent) this.session.attach((frame, t) => this.write(socket, frame, t));
  }

  private get silent(): boolean {
    const m = this.o.misbehave;
    if (m.silentAfterSeconds > 0 && !this.silenced && Date.now() - this.startedMs > m.silentAfterSeconds * 1000) {
      this.silenced = true;
      this.silentUntil = Date.now() + m.silentForSeconds * 1000;
      this.log(`going silent for ${m.silentForSeconds} s`);
    }
    return Date.now() < this.silentUntil;
  }

  /** The wire, with the fault switches: silence, garbage before every Nth frame, every Nth data telegram twice, one byte a write. */
  private write(socket: net.Socket, frame: string, t: Telegram): void {
    if (this.silent) return;
    this.framesSent += 1;
    const send = (bytes: string) => {
      if (!this.o.misbehave.splitBytes) socket.write(bytes, 'latin1');
      else for (const byte of bytes) socket.write(byte, 'latin1');
    };
    const g = this.o.misbehave.garbageEvery;
    if (g > 0 && this.framesSent % g === 0) send('\x00GARBAGE\x03\x7f');
    send(frame);
    if (t.flag !== 'D' || !PLC_SENDS.has(t.type)) return;
    this.dataSent += 1;
    const r = this.o.misbehave.repeatEvery;
    if (r > 0 && this.dataSent % r === 0) send(frame);
  }

  private tick(): void {
    const socket = this.socket;
    if (!socket || this.silent) return;
    if (!this.session.connected) this.session.attach((frame, t) => this.write(socket, frame, t));
    if (this.session.tick() === 'dead') {
      this.log('host silent for 3 heartbeats: dropping the connection');
      socket.destroy();
    }
  }
}

const PLC_SENDS = new Set<TelegramType>(['REQU', 'VERI', 'SCAN']);
