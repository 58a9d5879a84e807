// What goes wrong below hapi, on the wire: requests Node's parser refuses and oversized chunked
// bodies, answered with the same JSON errors as everything else.
import type { IncomingMessage } from 'node:http';
import { replaceClientErrorHandler } from '../internals/hapi';
import { responseInProgress, takeOverDestroy } from '../internals/node';

/** How much of an oversized chunked body is read away (and for how long) so that its 413 arrives. */
const OVERSIZED_DRAIN_BYTES = 1024 * 1024;
const OVERSIZED_DRAIN_MS = 5000;

/**
 * A chunked body over MaxPayloadBytes: hapi's reader destroys the request at the limit, which
 * resets the connection before the 413 is written (a body with a Content-Length is refused
 * before it is read). For chunked requests, that destroy reads the rest of the body away
 * instead, up to a bound, so that the 413 reaches the client; past the bound it destroys.
 */
export function answerOversizedChunkedBodies(req: IncomingMessage): void {
  if (!req.headers['transfer-encoding'] || req.headers['content-length'] !== undefined) return;
  takeOverDestroy(req, (err, destroy) => {
    // hapi's reader has given up (413): let go of it and of what it collected, or every drained
    // request would hold its body until the drain ends.
    req.unpipe();
    req.removeAllListeners('data');
    let extra = 0;
    const timer = setTimeout(() => destroy(err), OVERSIZED_DRAIN_MS);
    timer.unref();
    const done = () => clearTimeout(timer);
    req.on('data', (chunk: Buffer) => {
      extra += chunk.length;
      if (extra > OVERSIZED_DRAIN_BYTES) destroy(err);
    });
    req.once('end', done);
    req.once('close', done);
    // Typed as always set, but Node nulls a message's socket once it is detached from it.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
    req.socket?.once('close', done);
    req.resume();
  });
}

/** What Node's HTTP parser refused, in words a client developer can act on. */
function parserErrorMessage(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'the request headers are larger than 16 KB';
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'the request has both Content-Length and Transfer-Encoding, or a Transfer-Encoding the server does not accept';
    case 'HPE_INVALID_CONTENT_LENGTH':
      return 'the Content-Length header is not valid (conflicting or not a number)';
    case 'HPE_INVALID_METHOD':
    case 'HPE_INVALID_URL':
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_CONSTANT':
      return 'the request line is not valid HTTP/1.1';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'the request was not received completely in time';
    default:
      return `the request is not valid HTTP (${err.code ?? err.message})`;
  }
}

/**
 * Requests Node's HTTP parser refuses (oversized headers, a bad request line, conflicting
 * lengths, an Expect it cannot meet) are answered with the same JSON errors as everything else:
 * 431 for oversized headers, 417 for an unknown Expect, instead of an empty 400 or 417.
 * Replaces hapi's handler, which writes an empty 400.
 */
export function answerParserErrors(listener: import('node:http').Server): void {
  replaceClientErrorHandler(listener, (err, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const error = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    const body = JSON.stringify({ statusCode: status, error, message: parserErrorMessage(err) });
    const write = () => {
      if (socket.writable)
        socket.end(
          `HTTP/1.1 ${status} ${error}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      else socket.destroy();
    };
    // A response still being written on this connection (a pipelined request went wrong) finishes first.
    const current = responseInProgress(socket);
    if (current && !current.writableFinished) current.once('finish', write);
    else write();
  });
  // An Expect other than 100-continue: Node answers 417 with an empty body unless asked.
  listener.on('checkExpectation', (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const body = JSON.stringify({
      statusCode: 417,
      error: 'Expectation Failed',
      message: `the Expect header "${String(req.headers.expect).slice(0, 100)}" is not supported: send "100-continue" or none`,
    });
    res.writeHead(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    res.end(body);
  });
}
