// The only places where the service reaches past Node's public API: what the delivery tracker
// (lib/http/read-proof/delivery.ts) must see of a connection that Node's http server does not report. Each is
// pinned by test/lib/internals/node.test.ts against real sockets, and CI runs that test on
// every supported Node line: a Node release that changes one fails there, not in the field.
import type { Socket } from 'node:net';

/** What the handle's getpeername returns while the connection is up. */
const CONNECTED = 0;

type WithHandle = { _handle: { getpeername(out: object): number } | null };
type WithDestroySoon = { destroySoon(): void };

/**
 * After the peer's FIN, has a reset followed it? Node stops reading at the FIN and never reports
 * a later reset (its shutdown ignores the error), but getpeername on the handle fails (ENOTCONN)
 * once the reset has arrived. true: reset; false: still connected; null: the handle is closed,
 * nothing can be told any more.
 */
export function peerHasReset(socket: Socket): boolean | null {
  const handle = (socket as unknown as WithHandle)._handle;
  return handle ? handle.getpeername({}) !== CONNECTED : null;
}

/**
 * Hold back this socket's end(): Node's http server ends a socket as soon as the client's FIN has
 * been read, and once both sides are ended the handle closes and peerHasReset can tell nothing.
 * Returns the release, which puts the prototype's end() back and calls it as it was asked for
 * (if it was). An instance property shadows the prototype's method; release deletes it.
 */
export function holdEnd(socket: Socket): () => void {
  let asked: unknown[] | null = null;
  (socket as unknown as { end: (...args: unknown[]) => Socket }).end = (...args: unknown[]) => {
    asked = args;
    return socket;
  };
  return () => {
    delete (socket as { end?: unknown }).end;
    if (asked !== null && (asked.length > 0 || socket.writable)) socket.end(...(asked as []));
  };
}

/**
 * After the last response on a connection (the client sent `Connection: close` or spoke
 * HTTP/1.0, or the server closes), Node's http server calls `socket.destroySoon()`: our FIN, then
 * the handle closed at once, before the client's answer to it (its FIN after reading, or a reset)
 * could be seen. `instead` is asked first: when it returns true it has ended the socket itself and
 * keeps it open for that answer; false lets Node close it as usual.
 */
export function interceptCloseAfterLastResponse(socket: Socket, instead: () => boolean): void {
  const own = socket as unknown as WithDestroySoon;
  const original = own.destroySoon;
  own.destroySoon = () => {
    if (!instead()) original.call(socket);
  };
}
