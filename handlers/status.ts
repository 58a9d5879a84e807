// GET /status: the spec's queue counters, and the state of the link, the deliveries and the
// storage.
import type { QueueReads } from '../db/queue-reads';
import type { StorageStatus } from '../db/storage-status';
import type { QueueDispatcher, UncommittedMessages } from '../lib/queue/dispatcher';
import type { StoredAges } from '../lib/queue/arrivals';
import type { LiveCounts } from '../lib/queue/live-counts';
import type { QueueName } from '../model/messages';
import { type HandlerResult, httpFunction, ok } from '../lib/functions/define';
import type { ReplaySummary } from '../lib/testmode/seed';
import type { SorterLink } from '../lib/link/sorter-link-status';
import { problems, readiness } from '../lib/ops/health';
import { unauthorized } from '../lib/http/routes';
import { statusDto } from '../lib/http/ops-schemas';
import type { DecisionMeter, WakeMeter } from '../lib/ops/latency';
import type { DeliveryStatus } from '../lib/http/read-proof/delivery';
import type { DeadLetterReads } from '../db/dead-letter-store';
import type { AlarmEntry } from '../db/alarm-store';
import { withWhatToDo } from '../lib/ops/alarm-rules';
import type { StorageWatch } from '../lib/ops/storage-watch';

/** What the status handler needs. */
export interface StatusDeps {
  testMode: boolean;
  version: string;
  startedAt: Date;
  clock: () => Date;
  state: () => 'Running' | 'Stopping';
  store: Pick<QueueReads, 'oldest'>;
  /** The queues' and the outbox's figures (a long table counted a slice at a time). */
  counts: Pick<LiveCounts, 'figures'>;
  /** The oldest message's age, on the clock that never steps where this run saw it arrive. */
  ages: Pick<StoredAges, 'queueAgeMs'>;
  dispatchers: { [Q in QueueName]: QueueDispatcher<Q> };
  /** Messages handed out before their commit (HandOutBeforeCommit). */
  uncommitted: Pick<UncommittedMessages, 'counts'>;
  link: SorterLink;
  replay: ReplaySummary | null;
  wake: WakeMeter;
  decisions: Pick<DecisionMeter, 'status'>;
  requestsRemoved: { Superseded: number; Expired: number };
  deliveries: { status(): DeliveryStatus };
  deadLetters: Pick<DeadLetterReads, 'deadLetterCounts'>;
  storage: { status(): StorageStatus };
  /** The disk and the history's bounds, as last looked at (every 4 s). */
  storageWatch: Pick<StorageWatch, 'status' | 'diskStatus'>;
  schema: { applied: number; known: number };
  /** The active alarms. */
  alarms?: { list(): AlarmEntry[] };
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** GET /status: the spec's counters "Sortation Q" and "Destination Q", plus service and link state. */
export async function getStatus(deps: StatusDeps): Promise<HandlerResult> {
  return ok(await statusOf(deps));
}

/** The body of GET /status (the dashboard shows it too). */
export async function statusOf(deps: StatusDeps) {
  // Counted first: a long queue's count lets the event loop run between its slices, and what is
  // read below (the uncommitted messages among them) is read in the turn the count ends.
  const { sortation, destination, outbox: outboxDepth } = await deps.counts.figures();
  const now = deps.clock();
  const oldestMs = (['sortation', 'destination'] as const)
    .map((q) => deps.ages.queueAgeMs(q, deps.store.oldest(q), now.getTime()))
    .filter((ms): ms is number => ms !== null);
  // Not "Running" while the service cannot do its whole job: the readiness checks say why.
  // Messages handed out before their commit ends are counted with the table's (HandOutBeforeCommit).
  const waiting = (q: QueueName, stored: { waiting: number }) =>
    stored.waiting + deps.uncommitted.counts(q, deps.dispatchers[q].claimedIds).waiting;
  const wrong = problems(
    readiness({
      testMode: deps.testMode,
      now,
      storage: deps.storage.status(),
      schema: deps.schema,
      link: deps.link.status(),
      eventLoop: { delayP99Ms: () => 0 },
    }),
  );
  const state = deps.state() === 'Stopping' ? 'Stopping' : wrong.length > 0 ? 'Degraded' : 'Running';
  const dead = deps.deadLetters.deadLetterCounts();
  return {
    Service: 'sorter-integration-service',
    Version: deps.version,
    State: state,
    Problems: wrong,
    TestMode: deps.testMode,
    StartedAt: deps.startedAt.toISOString(),
    UptimeSeconds: seconds(now.getTime() - deps.startedAt.getTime()),
    // Waiting messages: those being handed out right now are no longer waiting.
    'Sortation Q': waiting('sortation', sortation),
    'Destination Q': waiting('destination', destination),
    OldestMessageAgeSeconds: oldestMs.length > 0 ? seconds(Math.max(...oldestMs)) : null,
    WaitingClients: { 'Sortation Q': deps.dispatchers.sortation.waiting, 'Destination Q': deps.dispatchers.destination.waiting },
    Sorter: deps.link.status(),
    Outbox: { Depth: outboxDepth },
    Replay: deps.replay,
    // Responses whose read is not proven yet, how the others were settled, and redeliveries
    // (possible duplicates: a message handed out again after an earlier response went unproven).
    Delivery: {
      ...deps.deliveries.status(),
      Redelivered: deps.dispatchers.sortation.redelivered + deps.dispatchers.destination.redelivered,
      DeadLettered: deps.dispatchers.sortation.deadLettered + deps.dispatchers.destination.deadLettered,
    },
    // Messages some client kept taking without proving its read: out of the queues, waiting for an operator.
    DeadLetters: { 'Sortation Q': dead.sortation, 'Destination Q': dead.destination },
    // REQUESTs taken out of the queue without reaching a WCS (superseded by a newer one for the item, or expired).
    RequestsRemoved: { ...deps.requestsRemoved },
    // From a sorter telegram's arrival to the response handing its message to a waiting client.
    WakeLatency: deps.wake.window.summary(),
    // From a REQUEST's arrival to its accepted assignment; the REQUESTs still waiting for one, and the late ones.
    DecisionLatency: deps.decisions.status(),
    // The writer thread: Ok, Stalled (waiting for a lock or the disk) or Failing, with figures; the
    // disk (Low before it is full) and the history's bounds by age and by size.
    Storage: { ...deps.storage.status(), Disk: deps.storageWatch.diskStatus(), History: deps.storageWatch.status() },
    // Raised by the service's own looks at these figures (docs/operations.md, "Alarms"); GET /alarms has the journal.
    Alarms: (deps.alarms?.list() ?? []).map(withWhatToDo),
  };
}

export const fn = httpFunction(getStatus, {
  notes: ['Counters "Sortation Q" and "Destination Q" are the messages waiting in each queue.'],
  responses: () => ({ 200: { description: 'Status', schema: statusDto }, 401: unauthorized }),
  event: () => ({}),
});
