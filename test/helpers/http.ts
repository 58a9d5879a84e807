/**
 * A JSON body as the tests read it: untyped on purpose, so that a test names the fields it
 * expects of a body (and expect() checks them) without a type per body.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A response as the tests look at it: status, raw text, parsed JSON (if any), content type. */
export interface Reply {
  status: number;
  text: string;
  json: Json;
  contentType: string | null;
}

/** One HTTP request over real loopback TCP (Node's fetch). */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Reply> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, contentType: res.headers.get('content-type') };
}

/** Drain a queue with timeOut=0 until 204; returns the bodies in order. */
export async function drain(base: string, queue: 'sortation' | 'destination', headers: Record<string, string> = {}): Promise<Json[]> {
  const out: Json[] = [];
  for (;;) {
    const r = await call(base, 'GET', `/${queue}?timeOut=0`, undefined, headers);
    if (r.status === 204) return out;
    out.push(r.json);
  }
}

/**
 * Wait (up to `ms`) until the service at `base` has settled: every response's read decided and
 * what it decided committed (a delivery's removal and history row are held up to 50 ms by the
 * writer: db/commit-plan.ts), in two looks 20 ms apart with nothing decided between them (a
 * request the service has read but not yet answered shows in neither count). Before a test reads
 * the database behind a running service; a test that adds up several tables reads them in one
 * transaction all the same.
 */
export async function settled(base: string, ms = 5000): Promise<Json> {
  let last: Json;
  let before: string | null = null;
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 20))) {
    last = (await call(base, 'GET', '/status')).json;
    const quiet = last.Delivery.AwaitingProof === 0 && last.Storage.PendingWrites === 0;
    const decided = JSON.stringify([last.Delivery.Confirmed, last.Delivery.Returned, last.Delivery.DeadLettered]);
    if (quiet && decided === before) return last;
    before = quiet ? decided : null;
    if (Date.now() > end) throw new Error(`not settled within ${ms} ms: responses awaiting proof, or their writes uncommitted`);
  }
}
