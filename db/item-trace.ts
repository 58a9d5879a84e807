// "What happened to item X": one timeline from the tables that record it (docs/operations.md).
// Used by GET /items/{TrackID} and by `npm run trace`, on a read-only connection.
import type { Db } from './connection';
import { SLICE_ROWS, nextTurn } from './table-count';

/** One thing that happened to an item, at a time (ISO-8601 UTC). */
export interface ItemEvent {
  Time: string;
  Event:
    | 'RequestReceived'
    | 'RequestDelivered'
    | 'RequestRemoved'
    | 'RequestWaiting'
    | 'RequestDeadLettered'
    | 'AssignmentPosted'
    | 'AssignmentAcknowledged'
    | 'AssignmentDropped'
    | 'AssignmentQueued'
    | 'VerifyReceived'
    | 'VerifyDelivered'
    | 'VerifyWaiting'
    | 'VerifyDeadLettered';
  /** The event in words. */
  Text: string;
  RecirculationCount?: number;
  Destination?: string;
  Client?: string | null;
  Attempt?: number;
  ReadProof?: string | null;
  Reason?: string;
}

/** An item's timeline, oldest first; null when the service knows nothing of it. */
export interface ItemTimeline {
  TrackID: string;
  Events: ItemEvent[];
}

interface DeliveredRow {
  type: 'REQUEST' | 'VERIFY';
  destination: string | null;
  /** The REQUEST's RecirculationCount, from its body. */
  rc: number | null;
  received_at: string;
  delivered_at: string;
  client_address: string | null;
  attempt: number;
  read_proof: string | null;
  removed_reason: string | null;
}
interface QueuedRow {
  type: 'REQUEST' | 'VERIFY';
  destination: string | null;
  recirculation_count: number | null;
  received_at: string;
}
interface DeadRow {
  type: 'REQUEST' | 'VERIFY';
  destination: string | null;
  payload: string;
  received_at: string;
  dead_at: string;
  attempts: number;
  last_client_address: string | null;
}
interface OutboxRow {
  destination: string;
  client_address: string | null;
  created_at: string;
  fate: 'Queued' | 'Acknowledged' | 'Dropped';
  settled_at: string | null;
  reason: string | null;
}

type Received = { type: string; received_at: string; destination: string | null };

/** A REQUEST's or VERIFY's arrival from the sorter. */
function receivedEvent(r: Received, rc: number | undefined): ItemEvent {
  return r.type === 'REQUEST'
    ? {
        Time: r.received_at,
        Event: 'RequestReceived',
        Text: `REQUEST from the sorter${rc !== undefined ? `, recirculation ${rc}` : ''}`,
        RecirculationCount: rc,
      }
    : {
        Time: r.received_at,
        Event: 'VerifyReceived',
        Text: `VERIFY from the sorter: reached ${r.destination}`,
        Destination: r.destination ?? undefined,
      };
}

/** A message in the history: it arrived, and was handed to a WCS or taken out of its queue. */
function deliveredEvents(r: DeliveredRow): ItemEvent[] {
  const rc = r.type === 'REQUEST' ? (r.rc ?? undefined) : undefined;
  if (r.removed_reason)
    return [
      receivedEvent(r, rc),
      {
        Time: r.delivered_at,
        Event: 'RequestRemoved',
        Text: `REQUEST taken out of the queue: ${r.removed_reason}`,
        Reason: r.removed_reason,
        RecirculationCount: rc,
      },
    ];
  const who = `${r.client_address ?? 'a client'}${r.attempt > 1 ? ` (delivery ${r.attempt})` : ''}`;
  const event = r.type === 'REQUEST' ? 'RequestDelivered' : 'VerifyDelivered';
  return [
    receivedEvent(r, rc),
    {
      Time: r.delivered_at,
      Event: event,
      Text: `${r.type} handed to ${who}`,
      Client: r.client_address,
      Attempt: r.attempt,
      ReadProof: r.read_proof,
      RecirculationCount: rc,
    },
  ];
}

/** A message still waiting in the sortation queue. */
function queuedEvents(r: QueuedRow): ItemEvent[] {
  const event = r.type === 'REQUEST' ? 'RequestWaiting' : 'VerifyWaiting';
  return [
    receivedEvent(r, r.recirculation_count ?? undefined),
    { Time: r.received_at, Event: event, Text: `${r.type} waiting in the sortation queue for a WCS` },
  ];
}

/** A message moved to the dead letters. */
function deadEvents(r: DeadRow): ItemEvent[] {
  const rc = r.type === 'REQUEST' ? (JSON.parse(r.payload) as { RecirculationCount?: number }).RecirculationCount : undefined;
  const who = r.last_client_address ?? 'a client';
  const Text = `${r.type} moved to the dead letters: handed out ${r.attempts} times without proof of the read, last to ${who}`;
  const event = r.type === 'REQUEST' ? 'RequestDeadLettered' : 'VerifyDeadLettered';
  return [
    receivedEvent(r, rc),
    { Time: r.dead_at, Event: event, Text, Client: r.last_client_address, Attempt: r.attempts, RecirculationCount: rc },
  ];
}

/** An assignment: posted, then acknowledged, dropped, or still waiting for the sorter. */
function assignmentEvents(r: OutboxRow): ItemEvent[] {
  const posted: ItemEvent = {
    Time: r.created_at,
    Event: 'AssignmentPosted',
    Text: `assignment to ${r.destination} posted by ${r.client_address ?? 'a client'}`,
    Destination: r.destination,
    Client: r.client_address,
  };
  const settledAt = r.settled_at ?? r.created_at;
  if (r.fate === 'Acknowledged')
    return [
      posted,
      {
        Time: settledAt,
        Event: 'AssignmentAcknowledged',
        Text: `assignment to ${r.destination} acknowledged by the sorter`,
        Destination: r.destination,
      },
    ];
  if (r.fate === 'Dropped')
    return [
      posted,
      {
        Time: settledAt,
        Event: 'AssignmentDropped',
        Text: `assignment to ${r.destination} dropped, not sent: ${r.reason}`,
        Destination: r.destination,
        Reason: r.reason ?? '',
      },
    ];
  return [
    posted,
    {
      Time: r.created_at,
      Event: 'AssignmentQueued',
      Text: `assignment to ${r.destination} waiting for the sorter's acknowledgement`,
      Destination: r.destination,
    },
  ];
}

/** Oldest first; at the same instant, in the order an item lives through them. */
const EVENT_ORDER = [
  'RequestReceived',
  'RequestWaiting',
  'RequestDelivered',
  'RequestRemoved',
  'RequestDeadLettered',
  'AssignmentPosted',
  'AssignmentQueued',
  'AssignmentAcknowledged',
  'AssignmentDropped',
  'VerifyReceived',
  'VerifyWaiting',
  'VerifyDelivered',
  'VerifyDeadLettered',
];

/**
 * The rows of `table` that `where` matches, read a slice of ids at a time: the queue and the
 * outbox have no index on the TrackID of every row (one more in their synced commits would cost
 * the card a page an item), so finding an item there walks the table, 18 ms at 200,000 queued
 * on this machine. Between slices the event loop goes on with the sorter's telegrams and the
 * WCS's polls. A table whose ids span one slice is read in one statement.
 */
function slicedScan<P extends object, R>(db: Db, table: 'sortation_queue' | 'outbox', select: string, where: string) {
  const first = db.prepare<[], number | null>(`SELECT min(id) FROM ${table}`).pluck();
  const rows = db.prepare<P & { from: number; to: number }, R>(
    `SELECT ${select} FROM ${table} WHERE id >= @from AND id < @to AND (${where})`,
  );
  // The next slice starts at the next row: a gap in the ids is stepped over, not walked.
  const next = db.prepare<[number], number | null>(`SELECT min(id) FROM ${table} WHERE id >= ?`).pluck();
  return async (params: P, yieldTurn: () => Promise<void>): Promise<R[]> => {
    const found: R[] = [];
    let from = first.get() ?? null;
    while (from !== null) {
      const to = from + SLICE_ROWS; // ids are unique: at most SLICE_ROWS rows
      found.push(...rows.all({ ...params, from, to }));
      from = next.get(to) ?? null;
      if (from !== null) await yieldTurn();
    }
    return found;
  };
}

/** Reads an item's timeline from an open database (statements prepared once). */
export function itemTrace(db: Db, yieldTurn: () => Promise<void> = nextTurn): (trackId: string) => Promise<ItemTimeline | null> {
  // delivered_messages: delivered_history with each body whole (migrations/012).
  const delivered = db.prepare<[string], DeliveredRow>(
    "SELECT type, destination, body ->> '$.RecirculationCount' AS rc, received_at, delivered_at, client_address, attempt, read_proof, removed_reason FROM delivered_messages WHERE track_id = ? AND type IN ('REQUEST', 'VERIFY')",
  );
  const queued = slicedScan<{ t: string }, QueuedRow>(
    db,
    'sortation_queue',
    'type, destination, recirculation_count, received_at',
    'track_id = @t',
  );
  // Settled in outbox_history; still waiting for the sorter in the outbox (migrations/009).
  const settled = db.prepare<[string], OutboxRow>(
    "SELECT destination, client_address, created_at, fate, settled_at, reason FROM outbox_history WHERE track_id = ? AND kind = 'ASSIGNMENT'",
  );
  const waiting = slicedScan<{ t: string }, OutboxRow>(
    db,
    'outbox',
    "destination, client_address, created_at, 'Queued' AS fate, NULL AS settled_at, NULL AS reason",
    "track_id = @t AND kind = 'ASSIGNMENT'",
  );
  const dead = db.prepare<[string], DeadRow>(
    "SELECT type, destination, payload, received_at, dead_at, attempts, last_client_address FROM dead_letters WHERE track_id = ? AND type IN ('REQUEST', 'VERIFY')",
  );
  return async (trackId) => {
    // The scans first: the indexed reads after them see what left the queue and the outbox meanwhile.
    const inQueue = await queued({ t: trackId }, yieldTurn);
    const inOutbox = await waiting({ t: trackId }, yieldTurn);
    const events = [
      ...delivered.all(trackId).flatMap(deliveredEvents),
      ...inQueue.flatMap(queuedEvents),
      ...dead.all(trackId).flatMap(deadEvents),
      ...settled.all(trackId).flatMap(assignmentEvents),
      ...inOutbox.flatMap(assignmentEvents),
    ];
    if (events.length === 0) return null;
    events.sort((a, b) => a.Time.localeCompare(b.Time) || EVENT_ORDER.indexOf(a.Event) - EVENT_ORDER.indexOf(b.Event));
    return {
      TrackID: trackId,
      Events: events.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as unknown as ItemEvent),
    };
  };
}
