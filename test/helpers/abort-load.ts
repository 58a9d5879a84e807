// Test helper: a load of raw-socket clients that abort requests at random moments.
import type Database from 'better-sqlite3';
import { createQueueStore } from '../../db/queue-store';
import type { DestinationInfoDto, SorterMessage } from '../../model/messages';
import { RawConnection, type RawResponse } from './raw-http';

/** How the clients behave. */
export interface AbortLoadOptions {
  port: number;
  /** Another connection to the service's database: messages are committed there while clients poll. */
  db: Database.Database;
  messages: number;
  clientsPerQueue: number;
  /** Share of requests dropped at a random moment. */
  abortRate: number;
  seed: number;
  /** Give up waiting for the last messages after this long (ms). */
  settleMs?: number;
}

/** What the clients saw. */
export interface AbortLoadResult {
  messages: number;
  requests: number;
  aborts: number;
  /** Messages received by a client (whole response read before any drop), counting repeats. */
  received: number;
  /** Messages never received by any client. */
  lost: number;
  /** Receptions beyond the first of the same message. */
  duplicates: number;
}

/** A deterministic pseudo-random sequence, so that a failing run can be replayed. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Message n: REQUEST, VERIFY or SCAN, each identifiable by its key. */
function message(n: number): { m: SorterMessage; key: string } {
  const id = String(n).padStart(7, '0');
  switch (n % 3) {
    case 0:
      return {
        key: `REQUEST:${id}`,
        m: {
          Type: 'REQUEST',
          TrackID: id,
          Barcode: `B${n}`,
          MessageCode: 210,
          InductLocation: 'IND01',
          RecirculationCount: 0,
          Length: 1,
          Width: 1,
          Height: 1,
          Weight: 1,
        },
      };
    case 1:
      return { key: `VERIFY:${id}`, m: { Type: 'VERIFY', TrackID: id, Barcode: `B${n}`, Destination: 'D001', MessageCode: 212 } };
    default: {
      const scan: DestinationInfoDto = {
        Type: 'SCAN',
        Destination: `S${id}`,
        DestinationStatus: 'Ready',
        DestinationText: '',
        LightStatus: 'Off',
        LightColor: 'Off',
        ButtonID: 0,
        MessageCode: 211,
        BatchDoorStatus: null,
      };
      return { key: `SCAN:S${id}`, m: scan };
    }
  }
}

const keyOf = (r: RawResponse): string | null => {
  if (r.status !== 210 && r.status !== 211 && r.status !== 212) return null;
  const m = JSON.parse(r.body);
  return m.Type === 'SCAN' ? `SCAN:${m.Destination}` : `${m.Type}:${m.TrackID}`;
};

/**
 * Commit `messages` sorter messages (in small bursts, while the clients run) and let
 * `clientsPerQueue` clients per queue consume them over kept-alive raw connections, each
 * request with a random timeOut of 0..3 s; `abortRate` of the requests end with the connection
 * dropped at a random moment: half of them within 3 ms of sending (a client that times out just
 * as its message is written), the others anywhere in their wait; a response that arrives first
 * is read and the connection dropped right after. A drop may land before, during or after the
 * response: no quiet window is kept around deliveries. Returns once every message was received
 * or nothing moves any more.
 */
export async function runAbortLoad(o: AbortLoadOptions): Promise<AbortLoadResult> {
  const random = rng(o.seed);
  const store = createQueueStore(o.db);
  const seen = new Map<string, number>();
  const result = { messages: o.messages, requests: 0, aborts: 0, received: 0 };
  let stop = false;
  let lastProgress: number;

  const record = (r: RawResponse) => {
    const key = keyOf(r);
    if (key === null) return;
    result.received += 1;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    lastProgress = Date.now();
  };

  const client = async (queue: 'sortation' | 'destination') => {
    let conn: RawConnection | null = null;
    while (!stop) {
      if (!conn || conn.closed) conn = new RawConnection(o.port);
      const c: RawConnection = conn;
      const timeOut = Math.floor(random() * 4);
      result.requests += 1;
      const response = c.request('GET', `/${queue}?timeOut=${timeOut}`).then(
        (r) => r,
        () => null,
      );
      if (random() < o.abortRate) {
        // The client gives up at this moment unless its whole response is here by then.
        const delay = random() < 0.5 ? random() * 3 : random() * (timeOut * 1000 + 20);
        // A response that came first is read, and the connection dropped right after it, as by
        // a client that restarts once it has its answer.
        const first = await Promise.race([response, sleep(delay).then(() => 'drop' as const)]);
        if (first !== 'drop' && first !== null) record(first);
        c.destroy();
        result.aborts += 1;
        conn = null;
        continue;
      }
      const r = await response;
      if (r) record(r);
      else conn = null;
      if (r?.status === 204 && timeOut === 0) await sleep(2); // an empty immediate check: poll again a moment later
    }
    conn?.destroy();
  };

  const clients = [
    ...Array.from({ length: o.clientsPerQueue }, () => client('sortation')),
    ...Array.from({ length: o.clientsPerQueue }, () => client('destination')),
  ];

  for (let n = 1; n <= o.messages;) {
    const burst = Math.min(1 + Math.floor(random() * 4), o.messages - n + 1);
    store.enqueue(
      Array.from({ length: burst }, (_, i) => message(n + i).m),
      new Date().toISOString(),
    );
    n += burst;
    await sleep(1 + random() * 5);
  }
  lastProgress = Date.now();
  const settleMs = o.settleMs ?? 15000;
  while (seen.size < o.messages && Date.now() - lastProgress < settleMs) await sleep(50);
  stop = true;
  await Promise.all(clients);
  return { ...result, lost: o.messages - seen.size, duplicates: result.received - seen.size };
}
