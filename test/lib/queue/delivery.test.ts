// The delivery tracker's decisions, driven by fake sockets and a fake clock: every piece of
// evidence a connection can give, and what the tracker makes of it. (What Node really does on the
// wire is pinned by socket-internals.test.ts; the whole path by the e2e delivery suites.)
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ASK_ANSWER_MS, AT_MOST_ONCE_GRACE_MS, DeliveryTracker, type DeliveryMode } from '../../../lib/queue/delivery';
import type { Claim, Unproven } from '../../../lib/queue/dispatcher';
import type { InductDto } from '../../../model/messages';

const VISIBILITY_MS = 30_000;
const GRACE_MS = 50;

/**
 * A client connection as the tracker sees it: events, end/destroy, and what getpeername would
 * say (`reset`). Node's http server calls destroySoon after the last response of a connection:
 * the prototype's version here records that Node closed it at once.
 */
class FakeSocket extends EventEmitter {
  ended = 0;
  destroyed = false;
  writable = true;
  closedByNode = false;
  reset = false;
  _handle: { getpeername(out: object): number } | null = { getpeername: () => (this.reset ? -107 : 0) };
  end(): this {
    this.ended += 1;
    this.writable = false;
    return this;
  }
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this._handle = null;
    this.emit('close');
    return this;
  }
  destroySoon(): void {
    this.closedByNode = true;
    this.end();
    this.destroy();
  }
}

/** What became of a claim. */
interface Outcome {
  committed?: { readProof?: string | null; clientAddress: string | null };
  released?: { mayHaveBeenRead: boolean; from?: Unproven };
}

function fakeClaim(id = 1, trackId = '0004711', queue: 'sortation' | 'destination' = 'sortation'): Claim & { outcome: Outcome } {
  const message: InductDto = { Type: 'REQUEST', TrackID: trackId, Barcode: 'B', MessageCode: 210, InductLocation: 'I1', RecirculationCount: 0, Length: 0, Width: 0, Height: 0, Weight: 0 };
  const outcome: Outcome = {};
  return {
    outcome,
    stored: { id, queue, message, receivedAt: 'T' } as never,
    attempt: 1,
    written: () => {},
    commit: async (d) => ((outcome.committed = { readProof: d.readProof, clientAddress: d.clientAddress }), true),
    release: (mayHaveBeenRead = false, from) => void (outcome.released = { mayHaveBeenRead, from }),
  };
}

describe('DeliveryTracker', () => {
  let server: EventEmitter;
  let tracker: DeliveryTracker;
  const start = (mode: DeliveryMode = 'AtLeastOnce') => {
    server = new EventEmitter();
    tracker = new DeliveryTracker({ mode, visibilityTimeoutMs: VISIBILITY_MS, closeGraceMs: GRACE_MS, clock: () => new Date('2026-11-25T12:00:00.000Z') });
    tracker.attach(server as unknown as Server);
  };
  /** A message response on `socket`: tracked, then written (Node's 'finish'). Returns the claim and the response. */
  const handOut = (socket: FakeSocket, options: { explicit?: boolean; id?: number; trackId?: string; write?: boolean } = {}) => {
    const claim = fakeClaim(options.id, options.trackId);
    const res = new EventEmitter();
    tracker.track(claim, { socket } as unknown as IncomingMessage, res as unknown as ServerResponse, { injected: false, address: '10.0.0.7', explicit: options.explicit });
    if (options.write !== false) res.emit('finish');
    return { claim, res };
  };
  /** Node's http server after the last response of a connection (Connection: close, HTTP/1.0). */
  const nodeClosesAfterLast = (socket: FakeSocket) => (socket as unknown as { destroySoon(): void }).destroySoon();
  /** A new request arrives on the connection. */
  const nextRequest = (socket: FakeSocket) => server.emit('request', { socket });

  beforeEach(() => {
    jest.useFakeTimers();
    start();
  });
  afterEach(() => jest.useRealTimers());

  it('keep-alive: the next request on the connection proves the read', () => {
    const socket = new FakeSocket();
    const { claim } = handOut(socket);
    expect(tracker.status().AwaitingProof).toBe(1);
    nextRequest(socket);
    expect(claim.outcome).toEqual({ committed: { readProof: 'NextRequest', clientAddress: '10.0.0.7' } });
    expect(tracker.status()).toMatchObject({ AwaitingProof: 0, Confirmed: { NextRequest: 1 } });
  });

  describe('the last response on a connection (the client asked to close, or spoke HTTP/1.0)', () => {
    it('our FIN goes out, the connection stays open, and the client\'s clean close in answer proves the read', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      nodeClosesAfterLast(socket);
      expect(socket).toMatchObject({ closedByNode: false, ended: 1, destroyed: false });
      socket.emit('end');
      expect(claim.outcome.committed?.readProof).toBe('LastResponse');
    });

    it('a reset in answer: back to the queue, marked as possibly read', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      nodeClosesAfterLast(socket);
      socket.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      expect(claim.outcome).toEqual({ released: { mayHaveBeenRead: true, from: { clientAddress: '10.0.0.7', reason: 'Reset' } } });
    });

    it('no answer within ASK_ANSWER_MS: the connection is destroyed and the message goes back (NoProof)', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      nodeClosesAfterLast(socket);
      jest.advanceTimersByTime(ASK_ANSWER_MS - 1);
      expect(socket.destroyed).toBe(false);
      jest.advanceTimersByTime(1);
      expect(socket.destroyed).toBe(true);
      expect(claim.outcome.released).toEqual({ mayHaveBeenRead: true, from: { clientAddress: '10.0.0.7', reason: 'NoProof' } });
      expect(tracker.status().Returned.NoProof).toBe(1);
    });

    it('with nothing to prove, Node closes the connection as it always does', () => {
      const socket = new FakeSocket();
      handOut(socket);
      nextRequest(socket); // the response is proven; this is the last one of a connection that answers nothing more
      nodeClosesAfterLast(socket);
      expect(socket.closedByNode).toBe(true);
    });

    it('when the client closed first, its close is judged (our end held until the grace) and Node does not close it early', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      socket.emit('end'); // the client's FIN, then Node's http server ends the socket: held
      socket.end();
      nodeClosesAfterLast(socket);
      expect(socket).toMatchObject({ closedByNode: false, ended: 0, destroyed: false });
      jest.advanceTimersByTime(GRACE_MS);
      expect(claim.outcome.committed?.readProof).toBe('ClientClose');
      expect(socket.ended).toBe(1); // released
    });
  });

  describe('the client closes first', () => {
    it('a reset already there: not read, back without a mark', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      socket.reset = true;
      socket.emit('end');
      expect(claim.outcome.released).toEqual({ mayHaveBeenRead: false, from: { clientAddress: '10.0.0.7', reason: 'ClosedUnread' } });
    });

    it('a reset within the grace: not read', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      socket.emit('end');
      socket.end(); // Node's http server, after the FIN: held so that the handle stays open to look
      expect(socket.ended).toBe(0);
      jest.advanceTimersByTime(GRACE_MS - 1);
      socket.reset = true;
      jest.advanceTimersByTime(1);
      expect(claim.outcome.released?.mayHaveBeenRead).toBe(false);
      expect(socket.ended).toBe(1);
    });

    it('no reset within the grace: read (ClientClose)', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      socket.emit('end');
      jest.advanceTimersByTime(GRACE_MS);
      expect(claim.outcome.committed?.readProof).toBe('ClientClose');
    });
  });

  it('a response that never finished writing gives its message back unmarked', () => {
    const socket = new FakeSocket();
    const { claim, res } = handOut(socket, { write: false });
    res.emit('close');
    expect(claim.outcome.released).toEqual({ mayHaveBeenRead: false, from: { clientAddress: '10.0.0.7', reason: 'ClosedUnread' } });
  });

  it('an idle kept-alive connection with an unproven response is asked after VisibilityTimeoutSeconds: a clean close proves the read', () => {
    const socket = new FakeSocket();
    const { claim } = handOut(socket);
    jest.advanceTimersByTime(VISIBILITY_MS);
    expect(socket.ended).toBe(1);
    socket.emit('end');
    expect(claim.outcome.committed?.readProof).toBe('ServerClose');
  });

  it("Node's keep-alive timeout: asks a connection that holds an unproven response, closes the others", () => {
    const holding = new FakeSocket();
    handOut(holding);
    server.emit('timeout', holding);
    expect(holding).toMatchObject({ ended: 1, destroyed: false });
    const idle = new FakeSocket();
    server.emit('timeout', idle);
    expect(idle.destroyed).toBe(true);
  });

  it('AtMostOnce: read when nothing failed within the grace', () => {
    start('AtMostOnce');
    const socket = new FakeSocket();
    const { claim } = handOut(socket);
    jest.advanceTimersByTime(AT_MOST_ONCE_GRACE_MS);
    expect(claim.outcome.committed?.readProof).toBe('Grace');
  });

  describe('X-Ack-Mode explicit', () => {
    it('only the acknowledgement proves the read: what the connection does says nothing', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket, { explicit: true, id: 17 });
      nextRequest(socket);
      socket.emit('end');
      socket.destroy();
      jest.advanceTimersByTime(GRACE_MS);
      expect(claim.outcome).toEqual({});
      expect(tracker.acknowledge('destination', [17])).toBe(0); // the other queue's 17
      expect(tracker.acknowledge('sortation', [17, 18])).toBe(1);
      expect(claim.outcome.committed?.readProof).toBe('Acknowledged');
      expect(tracker.acknowledge('sortation', [17])).toBe(0); // once
    });

    it('POST /sortation for the TrackID proves its REQUEST was read', () => {
      const { claim } = handOut(new FakeSocket(), { explicit: true, trackId: '0000042' });
      tracker.answered('0000099');
      expect(claim.outcome).toEqual({});
      tracker.answered('0000042');
      expect(claim.outcome.committed?.readProof).toBe('Answered');
    });

    it('no acknowledgement within VisibilityTimeoutSeconds: back to the queue, marked', () => {
      const { claim } = handOut(new FakeSocket(), { explicit: true });
      jest.advanceTimersByTime(VISIBILITY_MS);
      expect(claim.outcome.released).toEqual({ mayHaveBeenRead: true, from: { clientAddress: '10.0.0.7', reason: 'NoProof' } });
    });

    it('a connection that fails before the response is written still gives the message back at once', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket, { explicit: true, write: false });
      socket.emit('error', new Error('ECONNRESET'));
      expect(claim.outcome.released).toEqual({ mayHaveBeenRead: false, from: { clientAddress: '10.0.0.7', reason: 'Reset' } });
    });

    it('a connection-proven response is not acknowledged by id', () => {
      const { claim } = handOut(new FakeSocket(), { id: 5 });
      expect(tracker.acknowledge('sortation', [5])).toBe(0);
      tracker.answered('0004711');
      expect(claim.outcome).toEqual({});
    });
  });

  it('shutdown: asks every client holding an unproven response, gives back what stays unproven', async () => {
    const answering = new FakeSocket();
    const silent = new FakeSocket();
    const a = handOut(answering, { id: 1 });
    const b = handOut(silent, { id: 2 });
    const drained = tracker.drain();
    expect([answering.ended, silent.ended]).toEqual([1, 1]);
    answering.emit('end');
    await jest.advanceTimersByTimeAsync(ASK_ANSWER_MS);
    await drained;
    expect(a.claim.outcome.committed?.readProof).toBe('ServerClose');
    expect(b.claim.outcome.released?.mayHaveBeenRead).toBe(true);
  });
});
