// Test helper: a raw-socket HTTP client that can stall, drop and reset like a real one.
import net from 'node:net';

/** A response parsed from raw bytes. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * An HTTP/1.1 client on one raw TCP connection, written independently of the service's code:
 * requests go out as bytes, responses are cut from the byte stream by Content-Length. It keeps
 * the connection alive between requests, and can drop it at any moment, as a client that times
 * out or restarts does. A response counts as received only once all its bytes are here.
 */
export class RawConnection {
  readonly socket: net.Socket;
  private buffer = Buffer.alloc(0);
  private waiting: { resolve(r: RawResponse): void; reject(e: Error): void } | null = null;
  private readonly connected: Promise<void>;
  closed = false;

  constructor(port: number, host = '127.0.0.1') {
    // With `onread`, pause() stops reading from the kernel (plain sockets keep buffering in
    // Node), so stall() leaves a response truly unread, as a hung client process does.
    this.socket = net.connect({
      port,
      host,
      onread: {
        buffer: Buffer.alloc(64 * 1024),
        callback: (n, buf) => {
          this.buffer = Buffer.concat([this.buffer, buf.subarray(0, n)]);
          this.parse();
          return true;
        },
      },
    });
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.connected.catch(() => {});
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      this.closed = true;
      this.waiting?.reject(new Error('connection closed before a whole response'));
      this.waiting = null;
    });
  }

  /** Send raw bytes (a request, or anything else). */
  async send(bytes: string | Buffer): Promise<void> {
    await this.connected;
    this.socket.write(bytes);
  }

  /** Send a request and wait for its whole response. */
  async request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    const response = this.next();
    await this.send(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
    return response;
  }

  /** The next whole response on the connection. */
  next(): Promise<RawResponse> {
    const response = new Promise<RawResponse>((resolve, reject) => {
      if (this.closed) return reject(new Error('connection closed'));
      this.waiting = { resolve, reject };
      this.parse();
    });
    // A drop may come before the caller awaits this: the caller still sees the rejection.
    response.catch(() => {});
    return response;
  }

  /** Drop the connection at once (the kernel sends FIN, or RST if a response lies unread). */
  destroy(): void {
    this.socket.destroy();
  }

  /** Stop reading: what the service sends stays unread in the kernel, as with a hung client (closing then sends a reset). */
  stall(): void {
    this.socket.pause();
  }

  private parse(): void {
    if (!this.waiting) return;
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(head[0]?.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    const w = this.waiting;
    this.waiting = null;
    w.resolve({ status, headers, body });
  }
}

/**
 * Raw bytes to a port on a connection of their own; resolves with every byte that came back
 * (as text) once the connection closed. `after` runs once the bytes are written (to close our
 * side, say); without it, the server must close.
 */
export function rawExchange(port: number, bytes: string, after?: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      after?.(socket);
    });
    socket.on('data', (d) => got.push(d));
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(got).toString('utf8')));
  });
}
