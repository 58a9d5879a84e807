// What a WCS client's connection shows of the responses written on it: the evidence the delivery
// tracker (lib/http/read-proof/delivery.ts) turns into its verdicts.
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { ASK_ANSWER_MS, type Conn, type DeliverySettings, type Handout, type ReadProof, type ReturnReason } from './delivery-types';
import { holdEnd, interceptCloseAfterLastResponse, peerHasReset } from '../../internals/node';

/** What the watch concludes of a handout; the tracker decides what each verdict does to its claim. */
export interface Verdicts {
  /** The client read it; false if the handout already had its verdict. */
  confirm(h: Handout, proof: ReadProof): boolean;
  /** The read is not proven: the message goes back to its queue. */
  giveBack(h: Handout, reason: ReturnReason): void;
}

/**
 * Watches the client connections that carry message responses (docs/queue-semantics.md):
 * - the client's next request on the same kept-alive connection proves it read the previous
 *   response (a client sends it only after reading the whole response);
 * - a client that closes cleanly (FIN) after reading leaves the connection intact, while one
 *   that closes before our response reached it makes its kernel answer the response with a
 *   reset, which Node does not report after the FIN (lib/internals/node.ts looks): a FIN is
 *   judged at once and again after `closeGraceMs`, with our own FIN held back meanwhile;
 * - when we close first (after the connection's last response, or to ask a client that kept an
 *   unproven response), the client's clean close in answer proves the read: it closes after
 *   reading to its end, while closing with our response unread sends a reset;
 * - a reset or an error on the connection means the response was not read.
 */
export class ConnectionWatch {
  private readonly conns = new WeakMap<Socket, Conn>();

  constructor(
    private readonly settings: DeliverySettings,
    private readonly verdicts: Verdicts,
  ) {}

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
      if (conn && this.unproven(conn).length > 0) this.ask(conn, 'idle');
      else socket.destroy();
    });
  }

  /** The connection of `socket`, watched from its first handout on. */
  connOf(socket: Socket): Conn {
    let conn = this.conns.get(socket);
    if (conn) return conn;
    conn = { socket, handouts: new Set(), releaseEnd: null, asking: null, askTimer: null };
    this.conns.set(socket, conn);
    const c = conn;
    socket.on('error', () => this.connectionFailed(c));
    socket.on('close', () => this.connectionClosed(c));
    // Before Node's own 'end' listener, which would send our FIN at once.
    socket.prependListener('end', () => this.clientClosed(c));
    interceptCloseAfterLastResponse(socket, () => this.closingAfterLast(c));
    return conn;
  }

  /** The responses written on `conn` whose read is not proven yet. */
  unproven(conn: Conn): Handout[] {
    return [...conn.handouts].filter((h) => h.written);
  }

  /** Close the connection to ask its client whether it read: a clean close in answer proves it. */
  ask(conn: Conn, why: 'idle' | 'last'): void {
    if (conn.asking || conn.socket.destroyed) return;
    conn.asking = why;
    this.releaseEnd(conn);
    conn.socket.end();
    conn.askTimer = setTimeout(() => conn.socket.destroy(), ASK_ANSWER_MS);
  }

  /** A request (or rejected request bytes) arrived: the responses written before it were read. */
  private requestArrived(socket: Socket): void {
    const conn = this.conns.get(socket);
    if (conn) for (const h of this.unproven(conn)) this.verdicts.confirm(h, 'NextRequest');
  }

  private connectionFailed(conn: Conn): void {
    for (const h of [...conn.handouts]) this.verdicts.giveBack(h, 'Reset');
  }

  /** The connection is gone. Whatever has no verdict yet: AtMostOnce's grace decides; else it goes back. */
  private connectionClosed(conn: Conn): void {
    if (conn.askTimer) clearTimeout(conn.askTimer);
    for (const h of [...conn.handouts]) {
      if (!h.written) this.verdicts.giveBack(h, 'ClosedUnread');
      else if (this.settings.mode === 'AtLeastOnce') this.verdicts.giveBack(h, 'NoProof');
    }
  }

  /**
   * Node closes the connection after its last response. With an unproven response on it, our
   * FIN goes out and the connection stays open for the client's answer (its clean close after
   * reading, or a reset); returns false when there is nothing to prove.
   */
  private closingAfterLast(conn: Conn): boolean {
    if (this.unproven(conn).length === 0) return false;
    // The client closed first: its close is being judged, with our end held until then.
    if (conn.releaseEnd) conn.socket.end();
    else this.ask(conn, 'last');
    return true;
  }

  /** The client sent FIN. Was the connection reset in answer to our response? Look now and after the grace. */
  private clientClosed(conn: Conn): void {
    if (conn.handouts.size === 0) return;
    if (conn.asking) {
      // We closed first: a clean close in answer proves the read. (A reset would have come as an
      // error: we still read until the client's FIN. After both FINs the socket is closed on our
      // side, so peerHasReset cannot look.)
      for (const h of this.unproven(conn)) this.verdicts.confirm(h, conn.asking === 'last' ? 'LastResponse' : 'ServerClose');
      return;
    }
    if (this.judgeClose(conn, false)) return;
    // Hold our FIN back (Node calls end() right after this listener) so the handle stays open to look again.
    conn.releaseEnd = holdEnd(conn.socket);
    setTimeout(() => {
      this.judgeClose(conn, true);
      this.releaseEnd(conn);
    }, this.settings.closeGraceMs);
  }

  /**
   * After the client's FIN: a reset means our response was not read. Returns true when a verdict
   * was reached; `final` turns "no reset seen" into the proof of the read.
   */
  private judgeClose(conn: Conn, final: boolean): boolean {
    const reset = peerHasReset(conn.socket);
    if (reset === null) return false; // already closed: connectionClosed decided
    if (reset) {
      for (const h of [...conn.handouts]) this.verdicts.giveBack(h, 'ClosedUnread');
      return true;
    }
    if (!final) return false;
    for (const h of [...conn.handouts]) {
      if (h.written) this.verdicts.confirm(h, 'ClientClose');
      else this.verdicts.giveBack(h, 'ClosedUnread');
    }
    return true;
  }

  private releaseEnd(conn: Conn): void {
    const release = conn.releaseEnd;
    conn.releaseEnd = null;
    release?.();
  }
}
