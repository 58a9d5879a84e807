// The connection watch's evidence, driven by fake sockets and a fake clock: what each thing a
// client connection can do says of the responses written on it. (What the tracker makes of a
// verdict: delivery.test.ts; what Node really does on the wire: test/lib/internals/node.test.ts.)
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ConnectionWatch, type Verdicts } from '../../../../lib/http/read-proof/delivery';
import { ASK_ANSWER_MS, type DeliveryMode, type Handout } from '../../../../lib/http/read-proof/delivery-types';
import { FakeSocket } from '../../../helpers/fake-socket';

const GRACE_MS = 50;

/** Each handout's first verdict, ended as the tracker ends one (it leaves its connection). */
class Recorder implements Verdicts {
  readonly seen = new Map<Handout, string>();
  confirm(h: Handout, proof: string): boolean {
    return this.record(h, `confirm ${proof}`);
  }
  giveBack(h: Handout, reason: string): void {
    this.record(h, `giveBack ${reason}`);
  }
  private record(h: Handout, verdict: string): boolean {
    if (this.seen.has(h)) return false;
    this.seen.set(h, verdict);
    h.conn?.handouts.delete(h);
    return true;
  }
}

describe('ConnectionWatch', () => {
  let server: EventEmitter;
  let recorder: Recorder;
  let watch: ConnectionWatch;
  const start = (mode: DeliveryMode = 'AtLeastOnce') => {
    server = new EventEmitter();
    recorder = new Recorder();
    watch = new ConnectionWatch({ mode, visibilityTimeoutMs: 30_000, closeGraceMs: GRACE_MS, clock: () => new Date(0) }, recorder);
    watch.attach(server as unknown as Server);
  };
  /** A response on `socket`, written to its end unless `written` is false; returns its verdict's reader. */
  const handOut = (socket: FakeSocket, written = true) => {
    const conn = watch.connOf(socket as unknown as Socket);
    const h: Handout = {
      claim: null as never,
      conn,
      address: '10.0.0.7',
      deliveredAt: null,
      written,
      explicit: false,
      timer: null,
      done: false,
    };
    conn.handouts.add(h);
    return () => recorder.seen.get(h);
  };
  /** Node's http server after the last response of a connection (Connection: close, HTTP/1.0). */
  const nodeClosesAfterLast = (socket: FakeSocket) => socket.destroySoon();

  beforeAll(() => jest.useFakeTimers());
  beforeEach(() => start());
  afterEach(() => jest.clearAllTimers()); // a test's sockets answer no timer of the next
  afterAll(() => jest.useRealTimers());

  it('request bytes the parser rejects were still sent after reading; a socket error is no request', () => {
    const socket = new FakeSocket();
    const verdict = handOut(socket);
    server.emit('clientError', Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    expect(verdict()).toBeUndefined();
    server.emit('clientError', Object.assign(new Error('Header overflow'), { code: 'HPE_HEADER_OVERFLOW' }), socket);
    expect(verdict()).toBe('confirm NextRequest');
  });

  describe('the last response on a connection (the client asked to close, or spoke HTTP/1.0)', () => {
    it("our FIN goes out, the connection stays open, and the client's clean close in answer proves the read", () => {
      const socket = new FakeSocket();
      const verdict = handOut(socket);
      nodeClosesAfterLast(socket);
      expect(socket).toMatchObject({ closedByNode: false, ended: 1, destroyed: false });
      socket.emit('end');
      expect(verdict()).toBe('confirm LastResponse');
    });

    it('a reset in answer: not proven (Reset)', () => {
      const socket = new FakeSocket();
      const verdict = handOut(socket);
      nodeClosesAfterLast(socket);
      socket.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      expect(verdict()).toBe('giveBack Reset');
    });

    it('no answer within ASK_ANSWER_MS: the connection is destroyed and the message goes back (NoProof)', () => {
      const socket = new FakeSocket();
      const verdict = handOut(socket);
      nodeClosesAfterLast(socket);
      jest.advanceTimersByTime(ASK_ANSWER_MS - 1);
      expect(socket.destroyed).toBe(false);
      jest.advanceTimersByTime(1);
      expect(socket.destroyed).toBe(true);
      expect(verdict()).toBe('giveBack NoProof');
    });

    it('with nothing to prove, Node closes the connection as it always does', () => {
      const socket = new FakeSocket();
      handOut(socket);
      server.emit('request', { socket }); // the response is proven; this is the last one of a connection that answers nothing more
      nodeClosesAfterLast(socket);
      expect(socket.closedByNode).toBe(true);
    });

    it('when the client closed first, its close is judged (our end held until the grace) and Node does not close it early', () => {
      const socket = new FakeSocket();
      const verdict = handOut(socket);
      socket.emit('end'); // the client's FIN, then Node's http server ends the socket: held
      socket.end();
      nodeClosesAfterLast(socket);
      expect(socket).toMatchObject({ closedByNode: false, ended: 0, destroyed: false });
      jest.advanceTimersByTime(GRACE_MS);
      expect(verdict()).toBe('confirm ClientClose');
      expect(socket.ended).toBe(1); // released
    });
  });

  describe('the client closes first', () => {
    it('a reset already there: not read (ClosedUnread)', () => {
      const socket = new FakeSocket();
      const verdict = handOut(socket);
      socket.reset = true;
      socket.emit('end');
      expect(verdict()).toBe('giveBack ClosedUnread');
    });

    it('a reset within the grace: not read', () => {
      const socket = new FakeSocket();
      const verdict = handOut(socket);
      socket.emit('end');
      socket.end(); // Node's http server, after the FIN: held so that the handle stays open to look
      expect(socket.ended).toBe(0);
      jest.advanceTimersByTime(GRACE_MS - 1);
      socket.reset = true;
      jest.advanceTimersByTime(1);
      expect(verdict()).toBe('giveBack ClosedUnread');
      expect(socket.ended).toBe(1);
    });

    it('no reset within the grace: read (ClientClose); a response not yet written on it was not', () => {
      const socket = new FakeSocket();
      const written = handOut(socket);
      const unwritten = handOut(socket, false);
      socket.emit('end');
      jest.advanceTimersByTime(GRACE_MS);
      expect([written(), unwritten()]).toEqual(['confirm ClientClose', 'giveBack ClosedUnread']);
    });
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

  it('a connection gone without a verdict: AtLeastOnce gives back what was written (NoProof), AtMostOnce leaves it to its grace', () => {
    const socket = new FakeSocket();
    const [written, unwritten] = [handOut(socket), handOut(socket, false)];
    socket.destroy();
    expect([written(), unwritten()]).toEqual(['giveBack NoProof', 'giveBack ClosedUnread']);
    start('AtMostOnce');
    const other = new FakeSocket();
    const graced = handOut(other);
    other.destroy();
    expect(graced()).toBeUndefined();
  });
});
