// Before the sorter link connects: the service asks itself over loopback what a WCS asks first
// (HEAD on both queues, GET /status) and POSTs both answers with a body that fails validation at its
// last field, so that V8 has compiled the request path (the HTTP parser, the guards, hapi's
// lifecycle, a body's read, parse and validation, the handlers, the response) before the first
// parcel needs it. On a slow CPU that first compile is tens of milliseconds the first decisions
// would otherwise wait for. Nothing it asks takes or writes a message: a HEAD never takes one, and
// a POST refused by its schema never reaches its handler.
import http from 'node:http';
import type Hapi from '@hapi/hapi';
import type { ApiRole, NamedApiKey } from '../process/config';
import { keyOf, permits, roleOf } from './auth';

/** How many times each request is asked: enough for V8 to have compiled and profiled the path. */
const WARM_UP_ROUNDS = 20;

/**
 * Where the warm-up keeps its connections' local ports while it runs (on the server's `app`): the
 * access log and the metrics (access-log.ts) leave out the requests that come from them.
 */
export interface WarmUpState {
  warmUpPorts?: Set<number>;
}

/**
 * What the warm-up asks, and the role a key needs for it. A POST's body is what a WCS sends, but for
 * its last field, which its schema refuses (a number where text belongs): answered 400, never handled.
 */
export const ASKED: ReadonlyArray<{ method: string; path: string; role: ApiRole; body?: string }> = [
  { method: 'HEAD', path: '/sortation', role: 'wcs' },
  { method: 'HEAD', path: '/destination', role: 'wcs' },
  { method: 'GET', path: '/status', role: 'monitor' },
  {
    method: 'POST',
    path: '/sortation',
    role: 'wcs',
    body: '{"TrackID":"0004711","Destination":"D017","Barcode":"4006381333931","Type":0}',
  },
  { method: 'POST', path: '/destination', role: 'wcs', body: '{"Destination":"D017","DestinationStatus":"Ready","DestinationText":0}' },
];

/** A configured key whose role may ask for `access` (auth.ts's rule); else the first key: the answer is then 403, the path still runs. */
function keyFor(keys: ReadonlyArray<string | NamedApiKey>, access: ApiRole): string | undefined {
  const fits = keys.find((k) => permits(roleOf(k), access)) ?? keys[0];
  return fits === undefined ? undefined : keyOf(fits);
}

/**
 * Ask the started server `rounds` times each, on one kept-alive loopback connection. Never fails
 * the start: a warm-up that cannot connect (a firewall on loopback) only costs the first parcels
 * their compile time. Resolves with what it did.
 */
export async function warmUp(server: Hapi.Server, keys: ReadonlyArray<string | NamedApiKey>, rounds = WARM_UP_ROUNDS): Promise<WarmUp> {
  const started = performance.now();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const host = server.info.host === '0.0.0.0' ? '127.0.0.1' : server.info.host === '::' ? '::1' : server.info.host;
  const warmUpPorts = new Set<number>();
  (server.app as WarmUpState).warmUpPorts = warmUpPorts;
  const answers: Record<string, number> = {};
  let requests = 0;
  const result = (error: string | null): WarmUp => ({ requests, answers, ms: Math.round(performance.now() - started), error });
  const asked = ASKED.map(({ method, path, role, body }) => {
    const key = keyFor(keys, role);
    const headers: Record<string, string> = key ? { 'x-api-key': key } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    return { method, path, headers, body };
  });
  try {
    for (let i = 0; i < rounds; i++) {
      for (const { method, path, headers, body } of asked) {
        const status = await ask({ agent, host, port: Number(server.info.port), method, path, headers, body, ports: warmUpPorts });
        requests += 1;
        answers[status] = (answers[status] ?? 0) + 1;
      }
    }
    return result(null);
  } catch (err) {
    return result(err instanceof Error ? err.message : String(err));
  } finally {
    agent.destroy();
    delete (server.app as WarmUpState).warmUpPorts;
  }
}

/** What the warm-up did: the requests answered, by status, and how long it took. */
export interface WarmUp {
  requests: number;
  answers: Record<string, number>;
  ms: number;
  /** Why it stopped early (the service starts all the same). */
  error: string | null;
}

/** One request; its body read and dropped; resolves with its status. */
function ask(o: {
  agent: http.Agent;
  host: string;
  port: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  ports: Set<number>;
}) {
  return new Promise<number>((resolve, reject) => {
    const req = http.request({ agent: o.agent, host: o.host, port: o.port, method: o.method, path: o.path, headers: o.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('socket', (socket) => {
      const note = () => socket.localPort !== undefined && o.ports.add(socket.localPort);
      if (socket.localPort !== undefined) note();
      else socket.once('connect', note);
    });
    req.setTimeout(5000, () => req.destroy(new Error(`warm-up ${o.method} ${o.path}: no answer within 5 s`)));
    req.on('error', reject);
    req.end(o.body);
  });
}
