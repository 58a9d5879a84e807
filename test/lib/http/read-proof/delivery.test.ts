// The delivery tracker's decisions, driven by fake sockets and a fake clock: what it makes of the
// evidence, the timers it keeps, explicit acknowledgements and shutdown. (Each piece of evidence a
// connection can give: connection-watch.test.ts; what Node really does on the wire:
// test/lib/internals/node.test.ts; the whole path: the e2e delivery suites.)
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ASK_ANSWER_MS, AT_MOST_ONCE_GRACE_MS, DeliveryTracker, type DeliveryMode } from '../../../../lib/http/read-proof/delivery';
import type { Claim, Unproven } from '../../../../lib/queue/dispatcher';
import type { InductDto } from '../../../../model/messages';
import { FakeSocket } from '../../../helpers/fake-socket';

const VISIBILITY_MS = 30_000;
const GRACE_MS = 50;

/** What became of a claim. */
interface Outcome {
  committed?: { readProof?: string | null; clientAddress: string | null };
  released?: { mayHaveBeenRead: boolean; from?: Unproven };
}

function fakeClaim(id = 1, trackId = '0004711', queue: 'sortation' | 'destination' = 'sortation'): Claim & { outcome: Outcome } {
  const message: InductDto = {
    Type: 'REQUEST',
    TrackID: trackId,
    Barcode: 'B',
    MessageCode: 210,
    InductLocation: 'I1',
    RecirculationCount: 0,
    Length: 0,
    Width: 0,
    Height: 0,
    Weight: 0,
  };
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
    tracker = new DeliveryTracker({
      mode,
      visibilityTimeoutMs: VISIBILITY_MS,
      closeGraceMs: GRACE_MS,
      clock: () => new Date('2026-11-25T12:00:00.000Z'),
    });
    tracker.attach(server as unknown as Server);
  };
  /** A message response on `socket`: tracked, then written (Node's 'finish'). Returns the claim and the response. */
  const handOut = (socket: FakeSocket, options: { explicit?: boolean; id?: number; trackId?: string; write?: boolean } = {}) => {
    const claim = fakeClaim(options.id, options.trackId);
    const res = new EventEmitter();
    tracker.track(claim, { socket } as unknown as IncomingMessage, res as unknown as ServerResponse, {
      injected: false,
      address: '10.0.0.7',
      explicit: options.explicit,
    });
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

  describe('what the evidence does to the claim', () => {
    it('a reset in answer: back to the queue, marked as possibly read', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      nodeClosesAfterLast(socket);
      socket.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      expect(claim.outcome).toEqual({ released: { mayHaveBeenRead: true, from: { clientAddress: '10.0.0.7', reason: 'Reset' } } });
    });

    it('a reset already there: not read, back without a mark', () => {
      const socket = new FakeSocket();
      const { claim } = handOut(socket);
      socket.reset = true;
      socket.emit('end');
      expect(claim.outcome.released).toEqual({ mayHaveBeenRead: false, from: { clientAddress: '10.0.0.7', reason: 'ClosedUnread' } });
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
    expect(tracker.status().Returned).toEqual({ Reset: 0, ClosedUnread: 0, NoProof: 1 });
  });
});
