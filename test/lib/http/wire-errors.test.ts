// lib/http/wire-errors.ts on a real hapi server listening on loopback, driven by raw bytes: what
// Node's parser refuses is answered with the same JSON errors as everything else, and an
// oversized chunked body gets its 413 instead of a reset.
import Hapi from '@hapi/hapi';
import { answerOversizedChunkedBodies, answerParserErrors } from '../../../lib/http/wire-errors';
import { RawConnection, rawExchange } from '../../helpers/raw-http';

let server: Hapi.Server;
let port: number;

beforeEach(async () => {
  server = Hapi.server({ host: '127.0.0.1', port: 0, routes: { payload: { maxBytes: 1024 } } });
  answerParserErrors(server.listener);
  server.ext('onRequest', (request, h) => {
    answerOversizedChunkedBodies(request.raw.req);
    return h.continue;
  });
  server.route([
    { method: 'GET', path: '/ok', handler: (_request, h) => h.response({ Accepted: true }).code(201) },
    { method: 'POST', path: '/echo', handler: (request) => request.payload as object },
  ]);
  await server.start();
  port = server.info.port as number;
});
afterEach(() => server.stop({ timeout: 500 }));

describe("requests Node's parser refuses get JSON answers", () => {
  const raw = (bytes: string) => rawExchange(port, bytes);
  const jsonOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

  it('431 for headers over 16 KB', async () => {
    const response = await raw(`GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(response).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n[^]*Connection: close\r\n/);
    expect(jsonOf(response)).toEqual({
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      message: 'the request headers are larger than 16 KB',
    });
  });

  it('400 for a request line that is not HTTP/1.1, and for Content-Length beside Transfer-Encoding', async () => {
    expect(jsonOf(await raw('HELLO THERE\r\n\r\n'))).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'the request line is not valid HTTP/1.1',
    });
    const smuggled = await raw(
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    expect(jsonOf(smuggled)).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'the request has both Content-Length and Transfer-Encoding, or a Transfer-Encoding the server does not accept',
    });
  });

  it('a bad request pipelined behind a good one: the good one is answered whole first', async () => {
    const response = await raw('GET /ok HTTP/1.1\r\nHost: x\r\n\r\nHELLO THERE\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 201 Created\r\n[^]*\{"Accepted":true\}HTTP\/1\.1 400 Bad Request\r\n/);
  });

  it('417 naming an Expect other than 100-continue', async () => {
    const response = await raw(
      'POST /echo HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(response).toMatch(/^HTTP\/1\.1 417 /);
    expect(jsonOf(response)).toEqual({
      statusCode: 417,
      error: 'Expectation Failed',
      message: 'the Expect header "teapot" is not supported: send "100-continue" or none',
    });
  });
});

describe('oversized bodies', () => {
  it('a chunked body over the limit gets its 413 (read away instead of a reset); one with Content-Length too', async () => {
    const client = new RawConnection(port);
    const chunk = 'x'.repeat(1000);
    const chunked = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${`${(1000).toString(16)}\r\n${chunk}\r\n`.repeat(4)}0\r\n\r\n`;
    const response = client.next();
    await client.send(chunked);
    const tooLarge = await response;
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ statusCode: 413, error: 'Request Entity Too Large' });
    client.destroy();

    const other = new RawConnection(port);
    const declared = await other.request('POST', '/echo', { 'Content-Type': 'application/json' }, `"${'y'.repeat(2000)}"`);
    expect(declared.status).toBe(413);
    other.destroy();
  });
});
