// The benchmark's baseline target: the HTTP contract and telegram handling on bare node:http, in
// memory.
import http from 'node:http';
import net from 'node:net';
import { commandLine } from '../lib/process/command-line';
import { EnumDefaults, DestinationStatus, LightColor, LightStatus, parseEnum } from '../model/enums';
import { LatencyWindow } from '../lib/ops/latency';
import type { SorterMessage } from '../model/messages';
import { type TelegramType, encodeFrame, encodeData, nextSequence, parseContent, sorterMessageOf } from './v1-codec';
import { TelegramDecoder } from './v1-decoder';

/**
 * The benchmark's baseline: the same HTTP contract and the same telegram handling as the
 * service, on bare node:http with in-memory queues and no durability, no validation library,
 * no framework. What the service costs is measured against this.
 *   node dist/bench/baseline.js --port 8090 --sorter-port 2000
 */
const values = commandLine('baseline', 'node dist/bench/baseline.js [options]', {
  port: { type: 'string', default: '8090' },
  'sorter-port': { type: 'string', default: '2000' },
});

interface Queued {
  message: SorterMessage;
  arrivedAt: number;
}
interface Waiter {
  res: http.ServerResponse;
  timer: NodeJS.Timeout;
}
const queues: Record<'sortation' | 'destination', Queued[]> = { sortation: [], destination: [] };
const waiters: Record<'sortation' | 'destination', Waiter[]> = { sortation: [], destination: [] };
const wake = new LatencyWindow();
const codes = { REQUEST: 210, VERIFY: 212, SCAN: 211 } as const;

function deliver(res: http.ServerResponse, q: Queued) {
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
    deliver(waiter.res, { message, arrivedAt });
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

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const name = url.pathname.slice(1);
  if (req.method === 'GET' && (name === 'sortation' || name === 'destination')) {
    const q = name;
    const timeOut = Math.min(30, Math.max(0, Math.trunc(Number(url.searchParams.get('timeOut') ?? 0) || 0)));
    const next = waiters[q].length === 0 ? queues[q].shift() : undefined;
    if (next) return deliver(res, next);
    if (timeOut === 0) return res.writeHead(204).end();
    const waiter: Waiter = {
      res,
      timer: setTimeout(() => {
        waiters[q].splice(waiters[q].indexOf(waiter), 1);
        res.writeHead(204).end();
      }, timeOut * 1000),
    };
    waiters[q].push(waiter);
    res.on('close', () => {
      const i = waiters[q].indexOf(waiter);
      if (i >= 0) {
        clearTimeout(waiter.timer);
        waiters[q].splice(i, 1);
      }
    });
    return;
  }
  if (req.method === 'POST' && name === 'sortation') {
    const b = await readJson(req).catch(() => null);
    if (!b || typeof b.TrackID !== 'string' || typeof b.Destination !== 'string')
      return json(res, 400, { message: 'TrackID and Destination required' });
    const body = { TrackID: b.TrackID, Destination: b.Destination, Barcode: typeof b.Barcode === 'string' ? b.Barcode : '' };
    seq = nextSequence(seq);
    send('ASGN', seq, 'D', encodeData('ASGN', body));
    return json(res, 200, { Accepted: true, Delivery: socket ? 'Sent' : 'NotSent', Message: body });
  }
  if (req.method === 'POST' && name === 'destination') {
    const b = await readJson(req).catch(() => null);
    if (!b || typeof b.Destination !== 'string') return json(res, 400, { message: 'Destination required' });
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
    return json(res, 200, { Accepted: true, Message: body });
  }
  if (req.method === 'GET' && name === 'status') {
    return json(res, 200, {
      'Sortation Q': queues.sortation.length,
      'Destination Q': queues.destination.length,
      Sorter: { Connected: socket !== null },
      WakeLatency: wake.summary(),
    });
  }
  json(res, 404, { statusCode: 404, error: 'Not Found' });
});
server.keepAliveTimeout = 5000;
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : Number(values.port);
  process.stdout.write(`${JSON.stringify({ msg: 'baseline listening', url: `http://127.0.0.1:${port}` })}\n`);
});
process.once('SIGTERM', () => process.exit(0));
