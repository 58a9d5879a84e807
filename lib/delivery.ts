// The delivery tracker: when a message handed to a WCS client leaves its queue (proof of the
// read).
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Claim } from './dispatcher';
import { ASK_ANSWER_MS, AT_MOST_ONCE_GRACE_MS, CONNECTED, type Conn, type DeliverySettings, type DeliveryStatus, type Handout, type ReadProof, type ReturnReason, zero } from './delivery-types';

export type { DeliveryMode, DeliverySettings, DeliveryStatus, ReadProof, ReturnReason } from './delivery-types';
export { ASK_ANSWER_MS, AT_MOST_ONCE_GRACE_MS } from './delivery-types';

/**
 * When a message handed to a WCS client leaves its queue (docs/queue-semantics.md).
 *
 * HTTP has no acknowledgement, but a connection still shows whether a response was read:
 * - the client's next request on the same kept-alive connection proves it read the previous
 *   response (a client sends it only after reading the whole response);
 * - a client that closes cleanly (FIN) after reading leaves the connection intact, while one
 *   that closes before our response reached it makes its kernel answer the response with a
 *   reset. Node never reports that reset: the FIN came first, so the read returns end-of-file,
 *   Node stops reading, and its shutdown() ignores the error. `getpeername` on the handle does
 *   see it (ENOTCONN once the reset arrived), so a FIN is judged at once and again after
 *   `closeGraceMs`, for the reset to travel back over a real network; our own FIN is held back
 *   meanwhile, because once the handle is closed nothing can be judged any more;
 * - a reset or an error on the connection means the response was not read.
 * Without evidence, `AtLeastOnce` asks the client by closing the connection (after the keep-alive
 * idle time or `visibilityTimeoutMs`): a clean close in answer proves the read, no answer or a
 * reset puts the message back. `AtMostOnce` (the behaviour before this module) assumes the read
 * when nothing failed within 5 ms.
 */

/** Decides, per handed-out message, whether its client read it, and commits or releases its claim. */
export class DeliveryTracker {
  private readonly conns = new WeakMap<Socket, Conn>();
  private readonly pending = new Set<Handout>();
  private readonly confirmed = zero<ReadProof>(['NextRequest', 'ClientClose', 'ServerClose', 'Grace', 'Injected']);
  private readonly returned = zero<ReturnReason>(['Reset', 'ClosedUnread', 'NoProof']);

  constructor(private readonly settings: DeliverySettings) {}

  /** Listen on the HTTP server for the evidence that comes from requests and idle connections. */
  attach(listener: HttpServer): void {
    // Prepended: the proof must be taken before this request's own handler hands out a message.
    listener.prependListener('request', (req: IncomingMessage) => this.requestArrived(req.socket));
    // Bytes the parser rejects (e.g. headers over 16 KB) were still sent after reading.
    listener.prependListener('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (typeof err.code === 'string' && err.code.startsWith('HPE_')) this.requestArrived(socket);
    });
    // Node's keep-alive timeout: with a listener here Node leaves the socket to us. An idle
    // connection that holds an unproven response is asked; the others are closed as Node would.
    listener.on('timeout', (socket: Socket) => {
      const conn = this.conns.get(socket);
      if (conn && this.unproven(conn).length > 0) this.ask(conn);
      else socket.destroy();
    });
  }

  /**
   * A message response is being written on `res` (or was injected in-process). The claim is
   * committed or released once the evidence is in.
   */
  track(claim: Claim, req: IncomingMessage, res: ServerResponse, injected: boolean, address: string | null): void {
    const handout: Handout = { claim, conn: null, address, deliveredAt: null, written: false, timer: null, done: false };
    this.pending.add(handout);
    res.once('finish', () => {
      claim.written();
      handout.written = true;
      handout.deliveredAt = this.settings.clock().toISOString();
      if (injected) return this.confirm(handout, 'Injected');
      if (this.settings.mode === 'AtMostOnce') handout.timer = setTimeout(() => this.confirm(handout, 'Grace'), AT_MOST_ONCE_GRACE_MS);
      else handout.timer = setTimeout(() => handout.conn && this.ask(handout.conn), this.settings.visibilityTimeoutMs);
    });
    // 'close' follows every response; only one that never finished gives the message back.
    res.once('close', () => {
      if (!handout.written) this.giveBack(handout, 'ClosedUnread');
    });
    if (!injected) {
      const conn = this.connOf(req.socket);
      handout.conn = conn;
      conn.handouts.add(handout);
    }
  }

  /** Deliveries whose read is not proven yet, and what became of the others. */
  status(): DeliveryStatus {
    return { Mode: this.settings.mode, AwaitingProof: this.pending.size, Confirmed: { ...this.confirmed }, Returned: { ...this.returned } };
  }

  /**
   * Shutdown: ask every client that holds an unproven response (close its connection, wait for
   * its clean close) for up to ASK_ANSWER_MS. What stays unproven is not committed, so it is
   * delivered again after the restart.
   */
  async drain(): Promise<void> {
    const conns = new Set([...this.pending].map((h) => h.conn).filter((c): c is Conn => c !== null));
    for (const conn of conns) if (this.unproven(conn).length > 0) this.ask(conn);
    for (let waited = 0; this.pending.size > 0 && waited < ASK_ANSWER_MS; waited += 10) await new Promise((r) => setTimeout(r, 10));
    for (const handout of [...this.pending]) this.giveBack(handout, 'NoProof');
  }

  private connOf(socket: Socket): Conn {
    let conn = this.conns.get(socket);
    if (conn) return conn;
    conn = { socket, handouts: new Set(), heldEnd: null, asking: false, askTimer: null };
    this.conns.set(socket, conn);
    const c = conn;
    socket.on('error', () => this.connectionFailed(c));
    socket.on('close', () => this.connectionClosed(c));
    // Before Node's own 'end' listener, which would send our FIN at once.
    socket.prependListener('end', () => this.clientClosed(c));
    return conn;
  }

  private unproven(conn: Conn): Handout[] {
    return [...conn.handouts].filter((h) => h.written);
  }

  /** A request (or rejected request bytes) arrived: the responses written before it were read. */
  private requestArrived(socket: Socket): void {
    const conn = this.conns.get(socket);
    if (conn) for (const h of this.unproven(conn)) this.confirm(h, 'NextRequest');
  }

  private connectionFailed(conn: Conn): void {
    for (const h of [...conn.handouts]) this.giveBack(h, 'Reset');
  }

  /** The connection is gone. Whatever has no verdict yet: AtMostOnce's grace decides; else it goes back. */
  private connectionClosed(conn: Conn): void {
    if (conn.askTimer) clearTimeout(conn.askTimer);
    for (const h of [...conn.handouts]) {
      if (!h.written) this.giveBack(h, 'ClosedUnread');
      else if (this.settings.mode === 'AtLeastOnce') this.giveBack(h, 'NoProof');
    }
  }

  /** The client sent FIN. Was the connection reset in answer to our response? Look now and after the grace. */
  private clientClosed(conn: Conn): void {
    if (conn.handouts.size === 0) return;
    if (conn.asking) {
      // We closed first, long after the response went out: a clean close in answer proves the read.
      for (const h of this.unproven(conn)) this.confirm(h, 'ServerClose');
      return;
    }
    if (this.judgeClose(conn, false)) return;
    // Hold our FIN back (Node calls end() right after this listener) so the handle stays open to look again.
    const socket = conn.socket as Socket & { end: (...args: unknown[]) => Socket };
    conn.heldEnd = [];
    socket.end = (...args: unknown[]) => {
      conn.heldEnd = args;
      return socket;
    };
    setTimeout(() => {
      this.judgeClose(conn, true);
      this.releaseEnd(conn);
    }, this.settings.closeGraceMs);
  }

  /**
   * After the client's FIN: a reset handle (ENOTCONN) means our response was not read. Returns
   * true when a verdict was reached; `final` turns "no reset seen" into the proof of the read.
   */
  private judgeClose(conn: Conn, final: boolean): boolean {
    const handle = (conn.socket as unknown as { _handle: { getpeername(out: object): number } | null })._handle;
    const reset = handle === null ? null : handle.getpeername({}) !== CONNECTED;
    if (reset === null) return false; // already closed: connectionClosed decided
    if (reset) {
      for (const h of [...conn.handouts]) this.giveBack(h, 'ClosedUnread');
      return true;
    }
    if (!final) return false;
    for (const h of [...conn.handouts]) {
      if (h.written) this.confirm(h, 'ClientClose');
      else this.giveBack(h, 'ClosedUnread');
    }
    return true;
  }

  private releaseEnd(conn: Conn): void {
    const args = conn.heldEnd;
    if (args === null) return;
    conn.heldEnd = null;
    delete (conn.socket as { end?: unknown }).end; // the prototype's end() again
    if (args.length > 0 || conn.socket.writable) conn.socket.end(...(args as []));
  }

  /** Close the connection to ask its client whether it read: a clean close in answer proves it. */
  private ask(conn: Conn): void {
    if (conn.asking || conn.socket.destroyed) return;
    conn.asking = true;
    this.releaseEnd(conn);
    conn.socket.end();
    conn.askTimer = setTimeout(() => conn.socket.destroy(), ASK_ANSWER_MS);
  }

  private confirm(h: Handout, proof: ReadProof): void {
    if (!this.finish(h)) return;
    this.confirmed[proof] += 1;
    void h.claim.commit({ deliveredAt: h.deliveredAt ?? this.settings.clock().toISOString(), clientAddress: h.address, readProof: proof });
  }

  /**
   * Put the message back at the head. ClosedUnread is proof that the response was not read (or
   * not whole); after a plain reset or without any proof the client may have read it, so the
   * next delivery is marked as a possible duplicate.
   */
  private giveBack(h: Handout, reason: ReturnReason): void {
    if (!this.finish(h)) return;
    this.returned[reason] += 1;
    h.claim.release(h.written && reason !== 'ClosedUnread');
  }

  private finish(h: Handout): boolean {
    if (h.done) return false;
    h.done = true;
    if (h.timer) clearTimeout(h.timer);
    this.pending.delete(h);
    h.conn?.handouts.delete(h);
    return true;
  }
}
