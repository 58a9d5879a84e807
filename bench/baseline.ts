// The benchmark's baseline targets: the HTTP contract and telegram handling in memory, on bare
// node:http, or on hapi with joi (`--http hapi`: the service's framework without its durability).
import http from 'node:http';
import net from 'node:net';
import Hapi from '@hapi/hapi';
import { commandLine } from '../lib/process/command-line';
import { EnumDefaults, DestinationStatus, LightColor, LightStatus, parseEnum } from '../model/enums';
import { LatencyWindow } from '../lib/ops/latency';
import type { SorterMessage } from '../model/messages';
import { type TelegramType, encodeFrame, encodeData, nextSequence, parseContent, sorterMessageOf } from './v1-codec';
import { TelegramDecoder } from './v1-decoder';
import { assignmentBody, destinationBody, timeOutQuery } from '../lib/http/message-schemas';

/**
 * The benchmark's baseline: the same HTTP contract and the same telegram handling as the
 * service, on bare node:http with in-memory queues and no durability, no validation library,
 * no framework. What the service costs is measured against this.
 *   node dist/bench/baseline.js --port 8090 --sorter-port 2000
 * With `--http hapi` the same queues are served by hapi routes whose query and payload joi
 * validates (the bench's `baseline-hapi` target): what the service's fixed stack costs before
 * anything is written, so that a ratio to the bare baseline splits into the framework's share and
 * the durable queue's (docs/performance.md, "What limits it").
 */
const values = commandLine('baseline', 'node dist/bench/baseline.js [options]', {
  port: { type: 'string', default: '8090' },
  'sorter-port': { type: 'string', default: '2000' },
  http: { type: 'string', default: 'node' },
});
if (values.http !== 'node' && values.http !== 'hapi') {
  process.stderr.write(`baseline: --http takes node or hapi; got ${JSON.stringify(values.http)}\n`);
  process.exit(2);
}

interface Queued {
  message: SorterMessage;
  arrivedAt: number;
}
/** A client's long poll: answered with a message, or empty (204) when its time is out. */
interface Waiter {
  deliver(q: Queued): void;
  timer: NodeJS.Timeout;
}
const queues: Record<'sortation' | 'destination', Queued[]> = { sortation: [], destination: [] };
const waiters: Record<'sortation' | 'destination', Waiter[]> = { sortation: [], destination: [] };
const wake = new LatencyWindow();
const codes = { REQUEST: 210, VERIFY: 212, SCAN: 211 } as const;

function deliverOn(res: http.ServerResponse, q: Queued) {
  const body = JSON.stringify(q.message);
  res.writeHead(codes[q.message.Type], { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function enqueue(message: SorterMessage, arrivedAt: number) {
  const name = message.Type === 'SCAN' ? 'destination' : 'sortation';
  const waiter = waiters[name].shift();
  if (waiter) {
    clearTimeout(waiter.timer);
    // Wake latency, as the service measures it: only for a message a client was waiting for.
    wake.add(performance.now() - arrivedAt);
    waiter.deliver({ message, arrivedAt });
  } else queues[name].push({ message, arrivedAt });
}

// ---- the sorter link: acknowledge, number, heartbeat, reconnect ----
let socket: net.Socket | null = null;
let seq = 0;
function send(type: TelegramType, s: number, flag: 'D' | 'A' | 'N', data: string) {
  socket?.write(encodeFrame({ sender: 'WCS01', receiver: 'PLC01', seq: s, type, flag, data }), 'latin1');
}
function connect() {
  const s = net.connect({ host: '127.0.0.1', port: Number(values['sorter-port']) });
  s.setNoDelay(true);
  const decoder = new TelegramDecoder();
  s.on('connect', () => {
    socket = s;
    send('SYNS', 0, 'D', encodeData('SYNS', { Epoch: 'BASELINE0001', NextSeq: 0 }));
    send('SYNE', 0, 'D', '');
  });
  s.on('data', (chunk) => {
    const at = performance.now();
    for (const item of decoder.push(chunk)) {
      if (item.kind !== 'telegram') continue;
      let t;
      try {
        t = parseContent(item.content);
      } catch {
        continue;
      }
      if (t.flag !== 'D') continue;
      if (t.type === 'REQU' || t.type === 'VERI' || t.type === 'SCAN') enqueue(sorterMessageOf(t), at);
      send(t.type, t.seq, 'A', '');
    }
  });
  s.on('error', () => {});
  s.on('close', () => {
    socket = null;
    setTimeout(connect, 200);
  });
}
setInterval(() => send('LIFE', 0, 'D', ''), 1000).unref();
connect();

// ---- HTTP ----
/** A POST /sortation's assignment, sent to the sorter: what the 200 carries. */
function assign(b: { TrackID: string; Destination: string; Barcode?: unknown }) {
  const body = { TrackID: b.TrackID, Destination: b.Destination, Barcode: typeof b.Barcode === 'string' ? b.Barcode : '' };
  seq = nextSequence(seq);
  send('ASGN', seq, 'D', encodeData('ASGN', body));
  return { Accepted: true, Delivery: socket ? 'Sent' : 'NotSent', Message: body };
}
/** A POST /destination's settings, sent to the sorter: what the 200 carries. */
function setDestination(b: Record<string, unknown> & { Destination: string }) {
  const body = {
    Destination: b.Destination,
    DestinationStatus: parseEnum(DestinationStatus, b.DestinationStatus) ?? EnumDefaults.DestinationStatus,
    LightStatus: parseEnum(LightStatus, b.LightStatus) ?? EnumDefaults.LightStatus,
    LightColor: parseEnum(LightColor, b.LightColor) ?? EnumDefaults.LightColor,
    DestinationText: typeof b.DestinationText === 'string' ? b.DestinationText : '',
    BatchDoorStatus: null,
  };
  seq = nextSequence(seq);
  send('DSET', seq, 'D', encodeData('DSET', body));
  return { Accepted: true, Message: body };
}
const status = () => ({
  'Sortation Q': queues.sortation.length,
  'Destination Q': queues.destination.length,
  Sorter: { Connected: socket !== null },
  WakeLatency: wake.summary(),
});
/** A GET's timeOut in whole seconds, 0 to 30 (anything else: 0). */
const timeOutOf = (raw: unknown) => Math.min(30, Math.max(0, Math.trunc(Number(raw ?? 0) || 0)));
/** The queue's head for a GET, if nobody waits ahead of it (first come, first served). */
const takeNow = (q: 'sortation' | 'destination') => (waiters[q].length === 0 ? queues[q].shift() : undefined);
/** A long poll's wait: `done` gets a message, or nothing when `timeOut` seconds pass; the returned function gives up (the client went away). */
function wait(q: 'sortation' | 'destination', timeOut: number, done: (next: Queued | null) => void): () => void {
  const waiter: Waiter = {
    deliver: done,
    timer: setTimeout(() => {
      waiters[q].splice(waiters[q].indexOf(waiter), 1);
      done(null);
    }, timeOut * 1000),
  };
  waiters[q].push(waiter);
  return () => {
    const i = waiters[q].indexOf(waiter);
    if (i >= 0) {
      clearTimeout(waiter.timer);
      waiters[q].splice(i, 1);
    }
  };
}

function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        resolve(JSON.parse(body));
      } catch (err) {
        reject(err);
      }
    });
  });
}
function json(res: http.ServerResponse, code: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const nodeServer = () =>
  http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const name = url.pathname.slice(1);
    if (req.method === 'GET' && (name === 'sortation' || name === 'destination')) {
      const q = name;
      const timeOut = timeOutOf(url.searchParams.get('timeOut'));
      const next = takeNow(q);
      if (next) return deliverOn(res, next);
      if (timeOut === 0) return res.writeHead(204).end();
      const giveUp = wait(q, timeOut, (got) => (got ? deliverOn(res, got) : res.writeHead(204).end()));
      res.on('close', giveUp);
      return;
    }
    if (req.method === 'POST' && name === 'sortation') {
      const b = await readJson(req).catch(() => null);
      if (!b || typeof b.TrackID !== 'string' || typeof b.Destination !== 'string')
        return json(res, 400, { message: 'TrackID and Destination required' });
      return json(res, 200, assign({ TrackID: b.TrackID, Destination: b.Destination, Barcode: b.Barcode }));
    }
    if (req.method === 'POST' && name === 'destination') {
      const b = await readJson(req).catch(() => null);
      if (!b || typeof b.Destination !== 'string') return json(res, 400, { message: 'Destination required' });
      return json(res, 200, setDestination({ ...b, Destination: b.Destination }));
    }
    if (req.method === 'GET' && name === 'status') return json(res, 200, status());
    json(res, 404, { statusCode: 404, error: 'Not Found' });
  });

/** The same routes on hapi, joi validating each GET's query and each POST's body with the service's own schemas. */
async function hapiServer(): Promise<Hapi.Server> {
  const server = Hapi.server({ port: Number(values.port), host: '127.0.0.1', routes: { timeout: { server: false, socket: false } } });
  server.listener.keepAliveTimeout = 5000;
  const failAction = (_req: Hapi.Request, h: Hapi.ResponseToolkit, err?: Error) =>
    h.response({ message: err?.message }).code(400).takeover();
  for (const q of ['sortation', 'destination'] as const) {
    server.route({
      method: 'GET',
      path: `/${q}`,
      options: { validate: { query: timeOutQuery, failAction } },
      handler: (request, h) => {
        const timeOut = timeOutOf(request.query.timeOut);
        const reply = (got: Queued | null) => (got ? h.response(got.message).code(codes[got.message.Type]) : h.response().code(204));
        const next = takeNow(q);
        if (next || timeOut === 0) return reply(next ?? null);
        return new Promise((resolve) => {
          const giveUp = wait(q, timeOut, (got) => resolve(reply(got)));
          request.raw.res.once('close', giveUp);
        });
      },
    });
  }
  server.route({
    method: 'POST',
    path: '/sortation',
    options: { validate: { payload: assignmentBody, failAction } },
    handler: (request) => assign(request.payload as { TrackID: string; Destination: string; Barcode?: unknown }),
  });
  server.route({
    method: 'POST',
    path: '/destination',
    options: { validate: { payload: destinationBody, failAction } },
    handler: (request) => setDestination(request.payload as Record<string, unknown> & { Destination: string }),
  });
  server.route({ method: 'GET', path: '/status', handler: () => status() });
  await server.start();
  return server;
}

/** Listening: its address on stdout, as the bench reads it. */
const listening = (port: number) =>
  process.stdout.write(`${JSON.stringify({ msg: 'baseline listening', url: `http://127.0.0.1:${port}` })}\n`);
if (values.http === 'hapi') {
  hapiServer().then(
    (server) => listening(server.info.port as number),
    (err: unknown) => {
      process.stderr.write(`baseline: ${String(err)}\n`);
      process.exit(1);
    },
  );
} else {
  const server = nodeServer();
  server.keepAliveTimeout = 5000;
  server.listen(Number(values.port), '127.0.0.1', () => {
    const address = server.address();
    listening(typeof address === 'object' && address !== null ? address.port : Number(values.port));
  });
}
process.once('SIGTERM', () => process.exit(0));
