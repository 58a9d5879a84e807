import crypto from 'node:crypto';
import net from 'node:net';
import {
  NakReason,
  type Telegram,
  type TelegramType,
  decodeData,
  encodeContent,
  encodeData,
  nakData,
  nextSequence,
  parseContent,
} from '../lib/telegram';
import { TelegramDecoder } from '../lib/telegram-decoder';
import { isRepeat } from '../lib/sorter-link';

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
}

interface Pending {
  seq: number;
  type: TelegramType;
  data: string;
  sentAt: number;
}

/**
 * A TCP server that behaves like a sorter PLC's host interface: one client at a time, every
 * data telegram acknowledged, unacknowledged ones resent with the same number (after a timeout
 * and after a reconnect), repeats recognised, LIFE after idle, SYNS/SYNE after connecting.
 * Telegrams produced while no host is connected are kept and sent once one is.
 */
export class PlcLink {
  readonly server: net.Server;
  readonly counters = { telegrams_in: 0, telegrams_out: 0, resends: 0, duplicates_received: 0, naks_sent: 0, naks_received: 0, garbage_bytes_in: 0, connections: 0 };
  private socket: net.Socket | null = null;
  private decoder = new TelegramDecoder();
  private readonly epoch = crypto.randomBytes(6).toString('hex').toUpperCase();
  private nextSeq = 1;
  private readonly pending: Pending[] = [];
  private peerEpoch: string | null = null;
  private lastSeqIn = 0;
  private lastInMs = 0;
  private lastOutMs = 0;
  private dataSent = 0;
  private framesSent = 0;
  private readonly startedMs = Date.now();
  private silentUntil = 0;
  private silenced = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly o: Required<Omit<PlcLinkOptions, 'misbehave' | 'log' | 'onData'>> & { misbehave: Misbehaviour };

  constructor(private readonly options: PlcLinkOptions) {
    this.o = {
      port: options.port,
      host: options.host ?? '127.0.0.1',
      name: options.name ?? 'PLC01',
      peerName: options.peerName ?? 'WCS01',
      heartbeatMs: options.heartbeatMs ?? 2000,
      ackTimeoutMs: options.ackTimeoutMs ?? 1000,
      window: options.window ?? 64,
      misbehave: { dropEverySeconds: 0, silentAfterSeconds: 0, silentForSeconds: 0, garbageEvery: 0, repeatEvery: 0, ...options.misbehave },
    };
    this.server = net.createServer((socket) => this.onConnection(socket));
    const tick = setInterval(() => this.tick(), Math.max(20, Math.min(this.o.heartbeatMs, this.o.ackTimeoutMs) / 4));
    this.timers.push(tick);
    if (this.o.misbehave.dropEverySeconds > 0) {
      this.timers.push(setInterval(() => this.socket?.destroy(), this.o.misbehave.dropEverySeconds * 1000));
    }
  }

  /** Start listening; resolves with the port. */
  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(this.o.port, this.o.host, () => resolve((this.server.address() as net.AddressInfo).port)));
  }

  /** Is a host connected? */
  get connected(): boolean {
    return this.socket !== null;
  }

  /** Telegrams produced and not yet acknowledged by the host. */
  get unacknowledged(): number {
    return this.pending.length;
  }

  /** Queue a data telegram for the host; it is sent when the link and the window allow. */
  sendData(type: TelegramType, data: string): void {
    const seq = this.nextSeq;
    this.nextSeq = nextSequence(seq);
    this.pending.push({ seq, type, data, sentAt: 0 });
    this.flush();
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

  private onConnection(socket: net.Socket): void {
    if (this.socket) {
      // One host at a time, as a PLC's interface allows: the newer connection wins.
      this.socket.destroy();
    }
    socket.setNoDelay(true);
    this.socket = socket;
    this.counters.connections += 1;
    this.decoder = new TelegramDecoder();
    this.lastInMs = this.lastOutMs = Date.now();
    for (const p of this.pending) p.sentAt = 0;
    this.log(`host connected from ${socket.remoteAddress}:${socket.remotePort}`);
    socket.on('data', (chunk) => this.onBytes(socket, chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
      this.log('host disconnected');
    });
    // Resynchronisation: our session and first unacknowledged number, the backlog, then SYNE.
    this.write('SYNS', 0, 'D', encodeData('SYNS', { Epoch: this.epoch, NextSeq: this.pending[0]?.seq ?? 0 }));
    this.flush();
    this.write('SYNE', 0, 'D', '');
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

  private write(type: TelegramType, seq: number, flag: Telegram['flag'], data: string): void {
    if (!this.socket || this.silent) return;
    const frame = `\x02${encodeContent({ sender: this.o.name, receiver: this.o.peerName, seq, type, flag, data })}\x03`;
    this.framesSent += 1;
    const g = this.o.misbehave.garbageEvery;
    if (g > 0 && this.framesSent % g === 0) this.socket.write('\x00GARBAGE\x03\x7f', 'latin1');
    this.socket.write(frame, 'latin1');
    this.counters.telegrams_out += 1;
    this.lastOutMs = Date.now();
  }

  /** Send pending telegrams not yet sent, within the window. */
  private flush(): void {
    if (!this.socket || this.silent) return;
    const now = Date.now();
    let outstanding = this.pending.filter((p) => p.sentAt > 0).length;
    for (const p of this.pending) {
      if (outstanding >= this.o.window) break;
      if (p.sentAt > 0) continue;
      this.write(p.type, p.seq, 'D', p.data);
      this.dataSent += 1;
      if (this.o.misbehave.repeatEvery > 0 && this.dataSent % this.o.misbehave.repeatEvery === 0) this.write(p.type, p.seq, 'D', p.data);
      p.sentAt = now;
      outstanding += 1;
    }
  }

  private onBytes(socket: net.Socket, chunk: Buffer): void {
    if (socket !== this.socket || this.silent) return;
    this.lastInMs = Date.now();
    for (const item of this.decoder.push(chunk)) {
      if (item.kind === 'garbage') {
        this.counters.garbage_bytes_in += item.bytes.length;
        continue;
      }
      this.counters.telegrams_in += 1;
      this.onTelegram(item.content);
    }
  }

  private onTelegram(content: string): void {
    let t: Telegram;
    try {
      t = parseContent(content);
    } catch (err) {
      this.counters.naks_sent += 1;
      this.write('LIFE', 0, 'N', nakData(NakReason.MALFORMED, (err as Error).message));
      return;
    }
    if (t.flag === 'A') {
      const i = this.pending.findIndex((p) => p.seq === t.seq && p.type === t.type);
      if (i >= 0) this.pending.splice(i, 1);
      this.flush();
      return;
    }
    if (t.flag === 'N') {
      this.counters.naks_received += 1;
      this.log(`NAK from host for ${t.type} ${t.seq}: ${t.data}`);
      return; // resent after the ACK timeout
    }
    switch (t.type) {
      case 'LIFE':
      case 'SYNE':
        return this.write(t.type, t.seq, 'A', '');
      case 'SYNS': {
        try {
          const f = decodeData('SYNS', t.data);
          if (f.Epoch !== this.peerEpoch) {
            this.peerEpoch = f.Epoch as string;
            const next = f.NextSeq as number;
            this.lastSeqIn = next > 1 ? next - 1 : 0;
          }
          return this.write('SYNS', t.seq, 'A', '');
        } catch (err) {
          this.counters.naks_sent += 1;
          return this.write('SYNS', t.seq, 'N', nakData(NakReason.BAD_DATA, (err as Error).message));
        }
      }
      case 'ASGN':
      case 'DSET': {
        if (isRepeat(t.seq, this.lastSeqIn)) {
          this.counters.duplicates_received += 1;
          return this.write(t.type, t.seq, 'A', '');
        }
        let refused: void | { code: number; text: string };
        try {
          refused = this.options.onData(t);
        } catch (err) {
          refused = { code: NakReason.BAD_DATA, text: (err as Error).message };
        }
        if (refused) {
          this.counters.naks_sent += 1;
          return this.write(t.type, t.seq, 'N', nakData(refused.code, refused.text));
        }
        this.lastSeqIn = t.seq;
        return this.write(t.type, t.seq, 'A', '');
      }
      default:
        this.counters.naks_sent += 1;
        return this.write(t.type, t.seq, 'N', nakData(NakReason.UNEXPECTED, `${t.type} is not sent by a host`));
    }
  }

  private tick(): void {
    if (!this.socket) return;
    const now = Date.now();
    if (this.silent) return;
    if (now - this.lastInMs > 3 * this.o.heartbeatMs) {
      this.log('host silent for 3 heartbeats: dropping the connection');
      this.socket.destroy();
      return;
    }
    const oldest = this.pending.find((p) => p.sentAt > 0);
    if (oldest && now - oldest.sentAt > this.o.ackTimeoutMs) {
      for (const p of this.pending) {
        if (p.sentAt === 0) break;
        this.write(p.type, p.seq, 'D', p.data);
        p.sentAt = now;
        this.counters.resends += 1;
      }
    }
    this.flush();
    if (now - this.lastOutMs > this.o.heartbeatMs) this.write('LIFE', 0, 'D', '');
  }
}

