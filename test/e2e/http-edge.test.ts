// The HTTP edge against raw sockets, as clients that do not use our reference client send it:
// chunked bodies over the limit get their 413 (not a reset), malformed requests a JSON error, and a
// Host that is not a host and port a 400 before any route runs.
import net from 'node:net';
import { csv, removeHome, requestRow, tempHome } from '../helpers/home';
import { call } from '../helpers/http';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';

/** Write `request` on a fresh connection; resolve with everything read until the server closes or `ms` passes. */
function exchange(port: number, write: (s: net.Socket) => void, ms = 3000): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => write(s));
    let text = '';
    let error: string | undefined;
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}$/.test(text)) s.end();
    });
    s.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    s.on('close', () => resolve({ text, error }));
    setTimeout(() => s.destroy(), ms).unref();
  });
}

describe('HTTP edge, raw sockets', () => {
  let home: string;
  let svc: ServiceProcess;
  beforeAll(async () => {
    home = tempHome({ 'config.json': { TestMode: true, Port: 0 }, 'Service_PLC.csv': csv(requestRow('T1'), requestRow('T2')) });
    svc = await startServiceProcess(home);
  });
  afterAll(async () => {
    await svc.stop();
    removeHome(home);
  });

  it('answers a chunked body over MaxPayloadBytes with 413 JSON, like one with a Content-Length', async () => {
    const body = JSON.stringify({ TrackID: '1', Destination: 'D', Pad: 'x'.repeat(16_800) });
    const chunked = await exchange(svc.port, (s) => {
      s.write('POST /sortation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      for (let i = 0; i < body.length; i += 1000) {
        const c = body.slice(i, i + 1000);
        s.write(`${c.length.toString(16)}\r\n${c}\r\n`);
      }
      s.write('0\r\n\r\n');
    });
    expect(chunked.error).toBeUndefined();
    expect(chunked.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(chunked.text).toMatch(/"statusCode":413/);
    const sized = await exchange(svc.port, (s) =>
      s.write(`POST /sortation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
    );
    expect(sized.text).toMatch(/^HTTP\/1\.1 413 /);
    // The service still answers.
    expect((await fetch(`${svc.base}/status`)).status).toBe(200);
  });

  it.each([
    ['headers over 16 KB', `GET /status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 431, /headers are larger than 16 KB/],
    [
      'Content-Length and Transfer-Encoding together',
      'POST /sortation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      /Content-Length and Transfer-Encoding/,
    ],
    [
      'conflicting Content-Length',
      'POST /sortation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      400,
      /Content-Length/,
    ],
    ['a bad request line', 'GET /status HTTP/9.9 extra\r\nHost: x\r\n\r\n', 400, /not valid/],
    [
      'an Expect the service cannot meet',
      'GET /status HTTP/1.1\r\nHost: x\r\nExpect: x\r\n\r\n',
      417,
      /Expect header "x" is not supported/,
    ],
    ['a request without Host', 'GET /status HTTP/1.1\r\n\r\n', 400, /not valid HTTP/],
    ['a Host with a path in it', 'GET /status HTTP/1.1\r\nHost: x/b\r\n\r\n', 400, /Invalid host header/],
  ])('answers %s with a JSON error, not an empty reply', async (_what, raw, status, message) => {
    const res = await exchange(svc.port, (s) => s.write(raw));
    expect(res.text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    const body = JSON.parse(res.text.slice(res.text.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ statusCode: status });
    expect(body.message).toMatch(message);
  });

  // hapi routes on the request line's path but builds request.url from the Host header and that
  // path, so a Host with a '/', '?' or '#' in it shifts the URL's path and query. Such a request is
  // refused before any route runs: a GET /status (all a proxy lets through, say) takes no message.
  it('refuses a Host that would move the path: GET /status with Host "x/sortation?timeOut=0#" takes no message', async () => {
    const depth = async () => (await call(svc.base, 'GET', '/status')).json['Sortation Q'];
    const before = await depth();
    expect(before).toBeGreaterThan(0);
    const res = await exchange(svc.port, (s) => s.write('GET /status HTTP/1.1\r\nHost: x/sortation?timeOut=0#\r\n\r\n'));
    expect(res.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(res.text).toMatch(/Invalid host header/);
    expect(res.text).not.toMatch(/X-Message-Id/i);
    expect(await depth()).toBe(before);
  });
});
