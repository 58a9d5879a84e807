// The reference WCS client: the spec's typical loop on node:http, with deduplication by message
// key.
import http from 'node:http';
import { parseArgs } from 'node:util';
import { errorMessage } from '../lib/process/errors';

/**
 * A reference WCS client: the spec's "typical loop" (section 4), in plain TypeScript with
 * node:http and nothing else. Copy it as a starting point.
 *
 *   1. GET /status for connectivity.
 *   2. GET /sortation?timeOut=N; on 210 (REQUEST) POST /sortation with a destination (a 503 is
 *      sent again after its Retry-After: the service's storage was held up and wrote nothing);
 *      on 212 (VERIFY) just record where the item went.
 *   3. GET /destination?timeOut=N for SCANs: keep a map of destination states.
 *   4. POST /destination when a destination needs attention (here: light it when it is full).
 *
 * Delivery is at-least-once (docs/queue-semantics.md): the service removes a message once it
 * has proof that we read it, and our next request on the same kept-alive connection is that
 * proof. So each loop keeps one connection and goes straight on to its next request, which
 * makes a duplicate rare; the few that remain (a response whose proof was lost with its
 * connection) are skipped here by their key: Type + TrackID (+ RecirculationCount for a REQUEST).
 *
 * Run: `node dist/examples/wcs-client.js --base http://localhost:8081 --duration 30`.
 * At exit it prints one line `WCS {json}` with its counters.
 */

/** Options of the client. */
export interface WcsClientOptions {
  base: string;
  /** Sortation loops running in parallel (one consumer each). */
  loops?: number;
  /** Long-poll wait in seconds. */
  timeOut?: number;
  apiKey?: string;
  /** Stop after this long (ms); or call `stop()` on the returned handle. */
  durationMs?: number;
  log?: (line: string) => void;
}

/** What the client saw and did. */
export interface WcsStats {
  requests: number;
  /** Duplicates received and skipped (the same key again). */
  duplicate_requests: number;
  assignments_posted: number;
  verifies: number;
  duplicate_verifies: number;
  scans: number;
  destination_settings_posted: number;
  /** Messages the service marked as a repeated delivery (X-Delivery-Attempt 2 or more). */
  redeliveries_seen: number;
  errors: number;
  /** TrackID -> destination we assigned last. */
  assigned: Map<string, string>;
  /** TrackID -> destination its VERIFY reported. */
  verified: Map<string, string>;
}

/** A running client. */
export interface WcsClient {
  stats: WcsStats;
  stop(): Promise<WcsStats>;
  done: Promise<WcsStats>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The keys of the messages seen last, to skip a duplicate; the oldest are forgotten beyond `limit`. */
export class RecentKeys {
  private readonly keys = new Set<string>();

  constructor(private readonly limit = 100_000) {}

  /** True if `key` was seen (and is still remembered); remembers it either way. */
  seen(key: string): boolean {
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    if (this.keys.size > this.limit) {
      const oldest = this.keys.values().next();
      if (!oldest.done) this.keys.delete(oldest.value);
    }
    return false;
  }
}

/** What identifies a message for deduplication: a REQUEST is asked again per recirculation. */
export function dedupKey(m: { Type: string; TrackID?: string; RecirculationCount?: number; Destination?: string }): string {
  return m.Type === 'REQUEST' ? `REQUEST/${m.TrackID}/${m.RecirculationCount}` : `${m.Type}/${m.TrackID}`;
}

type JsonRequest = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; json: ReturnType<typeof JSON.parse>; retryAfterS?: number }>;

/**
 * Requests over one keep-alive agent, JSON in and out; counts the responses marked as possible
 * redeliveries (X-Delivery-Attempt above 1) in `stats`.
 */
function jsonRequester(base: string, agent: http.Agent, headers: Record<string, string>, stats: WcsStats): JsonRequest {
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        base + path,
        { method, agent, headers: payload ? { ...headers, 'content-length': Buffer.byteLength(payload) } : headers },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if (Number(res.headers['x-delivery-attempt'] ?? 1) > 1) stats.redeliveries_seen += 1;
            try {
              const retryAfter = Number(res.headers['retry-after']);
              resolve({
                status: res.statusCode ?? 0,
                json: text ? JSON.parse(text) : undefined,
                retryAfterS: Number.isFinite(retryAfter) ? retryAfter : undefined,
              });
            } catch (err) {
              reject(err);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** Pick a destination: no-reads go to REJECT; others spread over Ready destinations by TrackID. */
function chooseDestination(ready: Map<string, boolean>, trackId: string, barcode: string): string {
  if (barcode === 'NOREAD' || barcode === '') return 'REJECT';
  const candidates = [...ready]
    .filter(([, ok]) => ok)
    .map(([d]) => d)
    .sort();
  if (candidates.length === 0) return 'D001';
  let h = 0;
  for (const c of trackId) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return candidates[h % candidates.length] ?? 'D001';
}

/** What the client's loops share. */
interface ClientState {
  request: JsonRequest;
  stats: WcsStats;
  seen: RecentKeys;
  /** destination -> Ready? */
  ready: Map<string, boolean>;
  timeOut: number;
  log(line: string): void;
  stopping(): boolean;
}

/**
 * POST until stored: a 503 (the service's storage is held up, nothing was written) is sent again
 * after its Retry-After, for up to a minute or until the client stops.
 */
async function postUntilStored(c: ClientState, path: string, body: unknown): ReturnType<JsonRequest> {
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await c.request('POST', path, body);
    if (r.status !== 503 || c.stopping() || Date.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, (r.retryAfterS ?? 1) * 1000));
  }
}

/** One answer from /sortation: a REQUEST is answered with an assignment, a VERIFY recorded; duplicates skipped. */
async function onSortation(c: ClientState, r: { status: number; json: ReturnType<typeof JSON.parse> }): Promise<void> {
  const { stats } = c;
  if (r.status === 210) {
    const m = r.json;
    if (c.seen.seen(dedupKey(m))) {
      stats.duplicate_requests += 1; // already answered
      return;
    }
    stats.requests += 1;
    const destination = chooseDestination(c.ready, m.TrackID, m.Barcode);
    const ack = await postUntilStored(c, '/sortation', { TrackID: m.TrackID, Destination: destination, Barcode: m.Barcode });
    if (ack.status === 200) {
      stats.assignments_posted += 1;
      stats.assigned.set(m.TrackID, destination);
    } else stats.errors += 1;
  } else if (r.status === 212) {
    if (c.seen.seen(dedupKey(r.json))) {
      stats.duplicate_verifies += 1;
      return;
    }
    stats.verified.set(r.json.TrackID, r.json.Destination);
    stats.verifies += 1;
  } else if (r.status !== 204) {
    stats.errors += 1;
  }
}

/** One answer from /destination: a SCAN is the destination's state; one that just became full is flashed red. */
async function onDestination(c: ClientState, r: { status: number; json: ReturnType<typeof JSON.parse> }): Promise<void> {
  if (r.status !== 211) return;
  // A SCAN is the destination's state: applying a duplicate again is harmless.
  c.stats.scans += 1;
  const scan = r.json;
  const wasReady = c.ready.get(scan.Destination);
  c.ready.set(scan.Destination, scan.DestinationStatus === 'Ready');
  if (wasReady && scan.DestinationStatus === 'NotReady' && scan.LightColor !== 'RED') {
    await postUntilStored(c, '/destination', {
      Destination: scan.Destination,
      DestinationStatus: 'NotReady',
      LightStatus: 'Flashing',
      LightColor: 'RED',
      DestinationText: 'FULL - please empty',
    });
    c.stats.destination_settings_posted += 1;
  }
}

/** Long-poll `queue` until stopped, handing each answer to `handle`; an error is counted, logged and waited out. */
async function pollLoop(
  c: ClientState,
  queue: 'sortation' | 'destination',
  handle: (c: ClientState, r: Awaited<ReturnType<JsonRequest>>) => Promise<void>,
): Promise<void> {
  while (!c.stopping()) {
    try {
      await handle(c, await c.request('GET', `/${queue}?timeOut=${c.timeOut}`));
    } catch (err) {
      c.stats.errors += 1;
      c.log(`${queue}: ${errorMessage(err)}`);
      await sleep(500);
    }
  }
}

/** Start the reference client against a service. */
export function runWcsClient(options: WcsClientOptions): WcsClient {
  const { base, loops = 1, timeOut = 2, apiKey, log = () => {} } = options;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) };
  const stats: WcsStats = {
    requests: 0,
    duplicate_requests: 0,
    assignments_posted: 0,
    verifies: 0,
    duplicate_verifies: 0,
    scans: 0,
    destination_settings_posted: 0,
    redeliveries_seen: 0,
    errors: 0,
    assigned: new Map(),
    verified: new Map(),
  };
  let stopping = false;

  // One kept-alive connection per loop: a long poll holds its connection, so the pool needs
  // as many sockets as loops, and a loop's next request (on the socket it just freed: the
  // agent reuses the most recent one) proves to the service that the last response was read.
  // (node:http costs a third of the CPU of fetch per request, which matters when the benchmark
  // runs this client on the service's own machine.)
  const agent = new http.Agent({ keepAlive: true, maxSockets: loops + 2, scheduling: 'lifo' });
  const state: ClientState = {
    request: jsonRequester(base, agent, headers, stats),
    stats,
    seen: new RecentKeys(),
    ready: new Map(),
    timeOut,
    log,
    stopping: () => stopping,
  };

  const running = [
    pollLoop(state, 'destination', onDestination),
    ...Array.from({ length: loops }, () => pollLoop(state, 'sortation', onSortation)),
  ];
  const done = Promise.all(running).then(() => {
    agent.destroy();
    return stats;
  });
  if (options.durationMs !== undefined) setTimeout(() => (stopping = true), options.durationMs);
  return {
    stats,
    done,
    stop: () => {
      stopping = true;
      return done;
    },
  };
}

/** The counters as plain JSON (maps summarised). */
export function statsJson(s: WcsStats) {
  const { assigned, verified, ...rest } = s;
  return { ...rest, items_assigned: assigned.size, items_verified: verified.size };
}

if (require.main === module) {
  const usage =
    'usage: npm run wcs-client -- [--base http://localhost:8081] [--loops 1] [--time-out 2] [--duration SECONDS] [--api-key KEY]\n';
  const fail = (why: string): never => {
    process.stderr.write(`wcs-client: ${why}\n${usage}`);
    process.exit(2);
  };
  let values: { base?: string; duration?: string; loops?: string; 'time-out'?: string; 'api-key'?: string; help?: boolean } = {};
  try {
    ({ values } = parseArgs({
      options: {
        base: { type: 'string', default: 'http://localhost:8081' },
        duration: { type: 'string' },
        loops: { type: 'string', default: '1' },
        'time-out': { type: 'string', default: '2' },
        'api-key': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    fail(errorMessage(err));
  }
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const count = (name: 'duration' | 'loops' | 'time-out') => {
    const given = values[name];
    const n = Number(given);
    return Number.isFinite(n) && n >= 0 && given !== undefined && given.trim() !== ''
      ? n
      : fail(`--${name} must be a non-negative number, got ${JSON.stringify(values[name])}`);
  };
  const client = runWcsClient({
    base: values.base ?? 'http://localhost:8081',
    loops: Math.max(1, Math.floor(count('loops'))),
    timeOut: count('time-out'),
    apiKey: values['api-key'],
    durationMs: values.duration !== undefined ? count('duration') * 1000 : undefined,
    log: (l) => process.stderr.write(`wcs: ${l}\n`),
  });
  const progress = setInterval(() => process.stdout.write(`wcs ${JSON.stringify(statsJson(client.stats))}\n`), 2000);
  const end = async () => {
    clearInterval(progress);
    process.stdout.write(`WCS ${JSON.stringify(statsJson(await client.stop()))}\n`);
    process.exit(0);
  };
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  void client.done.then(end);
}
