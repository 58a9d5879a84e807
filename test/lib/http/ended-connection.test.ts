// A request that reaches the service after it ended the connection (the client sent it before our
// FIN arrived): Node still dispatches it, and nothing may come of it, since no answer can reach the
// client. The client here is a raw socket that keeps writing after our FIN, as any client whose
// request was already on its way does.
import net from 'node:net';
import type { InductDto } from '../../../model/messages';
import { type TestService, testService } from '../../helpers/service';
import { until } from '../../helpers/until';

jest.setTimeout(20000);
const induct: InductDto = {
  Type: 'REQUEST',
  TrackID: '0000001',
  Barcode: 'B1',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 1,
  Width: 1,
  Height: 1,
  Weight: 1,
};
const body = JSON.stringify({ TrackID: induct.TrackID, Destination: 'D001', Barcode: induct.Barcode });
const assignment = `POST /sortation HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/**
 * A keep-alive connection that polls /sortation once, reads the REQUEST, and sends its assignment
 * on the same connection the moment our FIN arrives. Resolves with all it received once closed.
 */
function pollThenAssignOnFin(port: number): { got210: Promise<void>; closed: Promise<string> } {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  let received = '';
  let signal210!: () => void;
  const got210 = new Promise<void>((resolve) => (signal210 = resolve));
  socket.on('data', (d) => {
    received += d.toString('latin1');
    if (received.startsWith('HTTP/1.1 210 ') && received.includes('"TrackID"')) signal210();
  });
  socket.on('error', () => {});
  // Written as our FIN is read, then the client's own FIN: it has nothing more to send.
  socket.on('end', () => socket.end(assignment));
  socket.write('GET /sortation?timeOut=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return { got210, closed: new Promise((resolve) => socket.on('close', () => resolve(received))) };
}

describe('a request that arrives on a connection the service already ended', () => {
  let t: TestService;
  let port: number;
  const outboxRows = () =>
    t.service.db.prepare('SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM outbox_history)').pluck().get();
  beforeEach(async () => {
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0 });
    await t.server.start();
    port = t.server.info.port as number;
    await t.publish([induct]);
  });
  afterEach(() => t.close());

  it('a stop asks the client that holds a message to close: an assignment sent as it does is not run, nor answered', async () => {
    const client = pollThenAssignOnFin(port);
    await client.got210;
    // The stop's first step asks this connection for proof of read (it holds the REQUEST): our FIN.
    const stopped = t.server.stop({ timeout: 2000 });
    const received = await client.closed;
    await stopped;
    expect(received.match(/^HTTP\/1\.1 /gm)).toHaveLength(1); // the 210 only
    expect(outboxRows()).toBe(0);
  });

  it("Node's keep-alive timeout while the client holds a message: the same, and the service goes on serving", async () => {
    t.server.listener.keepAliveTimeout = 300;
    const client = pollThenAssignOnFin(port);
    await client.got210;
    const received = await client.closed;
    expect(received.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
    expect(outboxRows()).toBe(0);
    // The same assignment on a fresh connection is taken: nothing was done the first time.
    const again = await fetch(`http://127.0.0.1:${port}/sortation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(again.status).toBe(200);
    await until(() => outboxRows() === 1, 2000, 'the assignment in the outbox');
  });

  it('assignments pipelined behind another request: each one run is answered, and the service goes on serving', async () => {
    // Behind a request whose answer closes the connection, Node answers nothing more: nothing more
    // may run. (A client that half-closes is another matter: docs/http-api.md.)
    const firsts = [
      'HEAD /sortation?timeOut=x HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /status HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      'GET /nowhere HTTP/1.0\r\n\r\n',
      'POST /sortation HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}',
    ];
    let answered = 0;
    for (let round = 0; round < 3; round++) {
      for (const first of firsts) {
        const socket = net.connect({ port, host: '127.0.0.1' });
        let received = '';
        const statuses = () => [...received.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
        socket.on('data', (d) => (received += d.toString('latin1')));
        socket.on('error', () => {});
        socket.write(first + assignment + assignment);
        await until(() => socket.destroyed || statuses().length === 3, 5000, 'three answers or the connection closed');
        socket.destroy();
        answered += statuses()
          .slice(1)
          .filter((st) => st === 200).length;
        await new Promise((r) => setTimeout(r, 20)); // a POST run without an answer would be committed by now
        expect(outboxRows()).toBe(answered);
      }
    }
    expect(answered).toBe(3 * 3 * 2); // behind the HEAD, the GET and the 415, which keep the connection
    const again = await fetch(`http://127.0.0.1:${port}/sortation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(again.status).toBe(200);
    await until(() => outboxRows() === answered + 1, 2000, 'the assignment in the outbox');
  });
});
