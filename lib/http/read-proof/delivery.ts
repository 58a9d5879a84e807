// The delivery tracker: when a message handed to a WCS client leaves its queue (proof of the
// read). What the connections show comes from lib/http/read-proof/connection-watch.ts.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { ConnectionWatch } from './connection-watch';
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
 * client's next request on it, its clean close, or a reset (lib/http/read-proof/connection-watch.ts).
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
