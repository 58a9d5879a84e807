// Every place where the service reaches past hapi's public API, and nowhere else (lib/internals/node.ts
// holds Node's): a request's input replaced before validation, and the listener's handler of
// requests Node's parser refuses. Each is pinned by test/lib/internals/hapi.test.ts against the
// hapi in package-lock.json: an upgrade that changes one fails there, not in the field.
import type { Request } from '@hapi/hapi';
import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Replace a request's query or payload before hapi validates it. hapi's types mark both
 * read-only; its own validation assigns them the same way, and the route's validators then see
 * the new value.
 */
export function replaceInput(request: Request, part: 'query' | 'payload', value: unknown): void {
  (request as unknown as Record<'query' | 'payload', unknown>)[part] = value;
}

/**
 * Answer what Node's HTTP parser refuses with `handler` instead of hapi's, which writes an empty
 * 400: hapi adds its 'clientError' listener to the listener it creates, and that one is removed.
 */
export function replaceClientErrorHandler(listener: HttpServer, handler: (err: NodeJS.ErrnoException, socket: Socket) => void): void {
  listener.removeAllListeners('clientError');
  listener.on('clientError', handler);
}
