// The delivery tracker: when a message handed to a WCS client leaves its queue (proof of the
// read); and below it the watch on the clients' connections, whose evidence the tracker turns
// into its verdicts.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { holdEnd, interceptCloseAfterLastResponse, peerHasReset } from '../../internals/node';
import type { Claim } from '../../queue/dispatcher';
import {
  ASK_ANSWER_MS,
  AT_MOST_ONCE_GRACE_MS,
  type Conn,
  type DeliverySettings,
  type DeliveryStatus,
  type Handout,
  READ_PROOFS,
  RETURN_REASONS,
  type ReadProof,
  type ReturnReason,
  zero,
} from './delivery-types';

export type { DeliveryMode, DeliverySettings, DeliveryStatus, ReadProof, ReturnReason } from './delivery-types';
export { ASK_ANSWER_MS, AT_MOST_ONCE_GRACE_MS } from './delivery-types';

/**
 * When a message handed to a WCS client leaves its queue (docs/queue-semantics.md).
 *
 * HTTP has no acknowledgement, but a connection still shows whether a response was read: the
 * client's next request on it, its clean close, or a reset (the connection watch, below).
 * Without evidence, `AtLeastOnce` asks the client by closing the connection (after the keep-alive
 * idle time or `visibilityTimeoutMs`): a clean close in answer proves the read, no answer or a
 * reset puts the message back. `AtMostOnce` assumes the read when nothing failed within 5 ms.
 * A client may instead acknowledge explicitly (X-Ack-Mode: explicit on its GET, then X-Ack with
 * the message id, or POST /sortation for a REQUEST's TrackID): the proof that holds through proxies.
 */
export class DeliveryTracker {
  private readonly pending = new Set<Handout>();
  /** Explicit handouts by queue and message id, and REQUESTs by TrackID, for the acknowledgements. */
  private readonly byMessage = new Map<string, Handout>();
  private readonly byTrackId = new Map<string, Set<Handout>>();
  private readonly confirmed = zero<ReadProof>(READ_PROOFS);
  private readonly returned = zero<ReturnReason>(RETURN_REASONS);
  private readonly watch: ConnectionWatch;

  constructor(private readonly settings: DeliverySettings) {
    this.watch = new ConnectionWatch(settings, {
      confirm: (h, proof) => this.confirm(h, proof),
      giveBack: (h, reason) => this.giveBack(h, reason),
    });
  }

  /** Listen on the HTTP server for the evidence that comes from requests and idle connections. */
  attach(listener: HttpServer): void {
    this.watch.attach(listener);
  }

  /**
   * A message response is being written on `res` (or was injected in-process). The claim is
   * committed or released once the evidence is in. `explicit`: only the client's acknowledgement
   * proves the read (or the visibility timeout gives the message back).
   */
  track(
    claim: Claim,
    req: IncomingMessage,
    res: ServerResponse,
    options: { injected: boolean; address: string | null; explicit?: boolean },
  ): void {
    const { injected, address, explicit = false } = options;
    const handout: Handout = { claim, conn: null, address, deliveredAt: null, written: false, explicit, timer: null, done: false };
    this.pending.add(handout);
    if (explicit) this.index(handout);
    // Prepended: before Node's own 'finish' listener, which may close the connection (its last
    // response) and must find this response written.
    res.prependOnceListener('finish', () => {
      claim.written();
      handout.written = true;
      handout.deliveredAt = this.settings.clock().toISOString();
      if (injected) return this.confirm(handout, 'Injected');
      if (explicit) {
        // Whatever the connection does now says nothing of the client behind it (a proxy's, say).
        handout.conn?.handouts.delete(handout);
        handout.conn = null;
        handout.timer = setTimeout(() => this.giveBack(handout, 'NoProof'), this.settings.visibilityTimeoutMs);
      } else if (this.settings.mode === 'AtMostOnce')
        handout.timer = setTimeout(() => this.confirm(handout, 'Grace'), AT_MOST_ONCE_GRACE_MS);
      else handout.timer = setTimeout(() => handout.conn && this.watch.ask(handout.conn, 'idle'), this.settings.visibilityTimeoutMs);
    });
    // 'close' follows every response; only one that never finished gives the message back.
    res.once('close', () => {
      if (!handout.written) this.giveBack(handout, 'ClosedUnread');
    });
    if (!injected) {
      const conn = this.watch.connOf(req.socket);
      handout.conn = conn;
      conn.handouts.add(handout);
    }
  }

  /** X-Ack: the client read these messages of `queue` (explicit handouts only); returns how many it proved. */
  acknowledge(queue: string, ids: readonly number[]): number {
    let proved = 0;
    for (const id of ids) {
      const h = this.byMessage.get(`${queue}:${id}`);
      if (h?.written && this.confirm(h, 'Acknowledged')) proved += 1;
    }
    return proved;
  }

  /** POST /sortation for `trackId`: the client read the REQUEST it answers (explicit handouts only). */
  answered(trackId: string): void {
    for (const h of [...(this.byTrackId.get(trackId) ?? [])]) if (h.written) this.confirm(h, 'Answered');
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
    for (const conn of conns) if (this.watch.unproven(conn).length > 0) this.watch.ask(conn, 'idle');
    for (let waited = 0; this.pending.size > 0 && waited < ASK_ANSWER_MS; waited += 10) await new Promise((r) => setTimeout(r, 10));
    for (const handout of [...this.pending]) this.giveBack(handout, 'NoProof');
  }

  /** Index an explicit handout for its acknowledgement: by message id, and a REQUEST by TrackID. */
  private index(h: Handout): void {
    const { queue, id, message } = h.claim.stored;
    this.byMessage.set(`${queue}:${id}`, h);
    if (message.Type === 'REQUEST') {
      const set = this.byTrackId.get(message.TrackID) ?? new Set();
      this.byTrackId.set(message.TrackID, set.add(h));
    }
  }

  private confirm(h: Handout, proof: ReadProof): boolean {
    if (!this.finish(h)) return false;
    this.confirmed[proof] += 1;
    void h.claim.commit({ deliveredAt: h.deliveredAt ?? this.settings.clock().toISOString(), clientAddress: h.address, readProof: proof });
    return true;
  }

  /**
   * Put the message back at the head. ClosedUnread is proof that the response was not read (or
   * not whole); after a plain reset or without any proof the client may have read it, so the
   * next delivery is marked as a possible duplicate (and counts towards MaxDeliveries).
   */
  private giveBack(h: Handout, reason: ReturnReason): void {
    if (!this.finish(h)) return;
    this.returned[reason] += 1;
    h.claim.release(h.written && reason !== 'ClosedUnread', { clientAddress: h.address, reason });
  }

  private finish(h: Handout): boolean {
    if (h.done) return false;
    h.done = true;
    if (h.timer) clearTimeout(h.timer);
    this.pending.delete(h);
    h.conn?.handouts.delete(h);
    if (h.explicit) {
      const { queue, id, message } = h.claim.stored;
      this.byMessage.delete(`${queue}:${id}`);
      if (message.Type === 'REQUEST') {
        const set = this.byTrackId.get(message.TrackID);
        set?.delete(h);
        if (set?.size === 0) this.byTrackId.delete(message.TrackID);
      }
    }
    return true;
  }
}

// What a WCS client's connection shows of the responses written on it.

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
