// Every place where the service reaches past Node's public API, and nowhere else (lib/internals/hapi.ts
// holds hapi's). What the delivery tracker (lib/http/read-proof/) must see of a connection that
// Node's http server does not report; the response a socket is writing; a request's destroy()
// taken over; a module put in require's cache before anything loads it (and loaded later, when used);
// V8's semi-space flag lowered for the worker threads started after the main thread; V8's heap
// growing factor set once the process runs. Each is pinned by test/lib/internals/node.test.ts, and
// CI runs that test on every supported Node line (.ci/node-lines): a Node release that changes one
// fails there, not in the field.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Module from 'node:module';
import v8 from 'node:v8';
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

/** The response Node's http server is writing on this socket, if any (its `_httpMessage`). */
export function responseInProgress(socket: Socket): ServerResponse | undefined {
  return (socket as unknown as { _httpMessage?: ServerResponse })._httpMessage;
}

/** Close the socket once what was written is flushed (`destroySoon`, which net.Socket has but does not document). */
export function destroySoon(socket: Socket): void {
  (socket as unknown as Partial<WithDestroySoon>).destroySoon?.();
}

/**
 * Take over `req.destroy()`: hapi's payload reader calls it at the size limit. `instead` gets the
 * error and the original destroy, to call when it is done. An instance property shadows the
 * prototype's method.
 */
export function takeOverDestroy(req: IncomingMessage, instead: (err: Error | undefined, destroy: (err?: Error) => void) => void): void {
  const destroy = req.destroy.bind(req);
  req.destroy = (err?: Error) => {
    instead(err, destroy);
    return req;
  };
}

/** The modules in require's cache that `substituteModule` put there. */
const substitutes = new WeakSet<Module>();

/**
 * Put `exports` in require's cache as the module `id` resolves to, unless it is loaded already:
 * whoever requires it later gets these exports and the module's own file is never evaluated.
 */
export function substituteModule(id: string, exports: object): void {
  const resolved = require.resolve(id);
  if (require.cache[resolved]) return;
  const stub = new Module(resolved);
  stub.filename = resolved;
  stub.loaded = true;
  stub.exports = exports;
  substitutes.add(stub);
  require.cache[resolved] = stub;
}

/**
 * The real exports of a module whose place `substituteModule` took: its file evaluated now (once;
 * whoever requires it from then on gets the same exports).
 */
export function loadSubstituted(id: string): unknown {
  const resolved = require.resolve(id);
  const cached = require.cache[resolved];
  if (cached && !substitutes.has(cached)) return cached.exports;
  delete require.cache[resolved];
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loading the module the substitute stood for, by its file
  return require(resolved) as unknown;
}

/**
 * Let the module `id` be evaluated only when its exports are first used: until then require
 * gives a stand-in whose first property read loads the module (`loadSubstituted`). Functions
 * read through the stand-in are bound to the real exports, so that `Class.method()` keeps its
 * `this`. For a dependency's dependency that runs only with options the service does not set.
 */
export function deferModule(id: string): void {
  let real: Record<PropertyKey, unknown> | undefined;
  const load = (): Record<PropertyKey, unknown> => (real ??= loadSubstituted(id) as Record<PropertyKey, unknown>);
  substituteModule(
    id,
    new Proxy(
      {},
      {
        get: (_target, key) => {
          const exports = load();
          const value = exports[key];
          return typeof value === 'function' ? (value.bind(exports) as unknown) : value;
        },
        has: (_target, key) => key in load(),
      },
    ),
  );
}

/**
 * Give the worker threads started from now on a semi-space of `mb` (their young generation is
 * about three times that). A worker's `resourceLimits.maxYoungGenerationSizeMb` does not hold
 * where the process was started with `--max-semi-space-size` (as `npm start` and the systemd
 * units start it, for the main thread): the flag wins. V8 reads the flag when it creates an
 * isolate, so lowering it after the main thread's heap is set up changes the workers' alone.
 * Node calls setting V8 flags after start undefined behaviour: the pin test checks it per Node line.
 */
export function setWorkerSemiSpace(mb: number): void {
  v8.setFlagsFromString(`--max-semi-space-size=${mb}`);
}

/**
 * How far above its live objects V8 lets an isolate's old generation grow before a full
 * collection, in percent. V8's own factor grows with the collector's speed, up to 4 times the
 * live size on a fast CPU: the service's main thread keeps about 16 MB live, so its heap could
 * reach 60 MB of mostly garbage. At 20, V8's floor of 8 MB above the live size decides instead.
 * Measured at 50 items/s: about 5 MB less resident memory, CPU per item within the noise
 * (docs/performance.md, "Memory"). lib/process/v8-heap.ts sets it before any module loads.
 */
export const HEAP_GROWING_PERCENT = 20;

/**
 * Set V8's heap growing factor (HEAP_GROWING_PERCENT) for every isolate of the process, unless
 * the command line gives `--heap-growing-percent` itself. V8 reads the flag at each full
 * collection, so setting it once the process runs holds for the main thread and the workers alike;
 * Node calls setting V8 flags after start undefined behaviour: the pin test checks it per Node line.
 */
export function tuneHeapGrowing(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
