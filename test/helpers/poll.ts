// Test helper: one long poll over a raw loopback connection, and how it ended.
import net from 'node:net';

/** What one long poll ended with. */
export type PollOutcome = { status: number; body: string } | 'aborted';

/**
 * One GET over a raw loopback TCP connection (HTTP/1.1, keep-alive, closed after the
 * response). With `abortAfterMs`, the client gives up at that moment if not one byte of the
 * response has reached it (the socket is destroyed): exactly "a client that disconnects
 * before its response is written". Raw bytes are watched, not parser events, so a response
 * that did arrive is never mistaken for an abort.
 */
export function poll(port: number, path: string, abortAfterMs?: number): Promise<PollOutcome> {
  return new Promise((resolve, reject) => {
    let raw = Buffer.alloc(0);
    let done = false;
    const finish = (outcome: PollOutcome) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(outcome);
    };
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    socket.on('data', (chunk) => {
      raw = Buffer.concat([raw, chunk]);
      const headerEnd = raw.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const head = raw.subarray(0, headerEnd).toString('latin1');
      const status = Number(head.split(' ')[1]);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const body = raw.subarray(headerEnd + 4);
      if (body.length >= length) finish({ status, body: body.subarray(0, length).toString('utf8') });
    });
    socket.on('error', (err) => (done ? undefined : raw.length === 0 && abortAfterMs !== undefined ? finish('aborted') : reject(err)));
    socket.on('close', () => (done ? undefined : reject(new Error(`connection closed before a whole response (${raw.length} bytes)`))));
    if (abortAfterMs !== undefined) setTimeout(() => raw.length === 0 && finish('aborted'), abortAfterMs);
  });
}
