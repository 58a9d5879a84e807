// What GET /metrics reads from the running service at each scrape.
import type { DeadLetterReads } from '../../db/dead-letter-store';
import type { OutboxReads } from '../../db/outbox-store';
import type { QueueReads } from '../../db/queue-reads';
import type { StorageStatus } from '../../db/storage-status';
import type { SorterLink } from '../link/sorter-link-status';
import type { StoredAges } from '../queue/arrivals';
import type { LiveCounts, QueueFigures } from '../queue/live-counts';
import type { QueueDispatcher } from '../queue/dispatcher';
import type { DecisionMeter } from './latency';
import type { DiskSnapshot, MetricsSnapshot } from './metrics';
import type { StorageWatch } from './storage-watch';

/** The parts of the running service the metrics read. */
export interface MetricsSources {
  store: Pick<QueueReads, 'oldest'>;
  outbox: Pick<OutboxReads, 'peek'>;
  /** The queues' and the outbox's figures (a long table counted a slice at a time). */
  counts: Pick<LiveCounts, 'figures'>;
  dispatchers: { sortation: QueueDispatcher<'sortation'>; destination: QueueDispatcher<'destination'> };
  link: SorterLink;
  storage: { status(): StorageStatus };
  requestsRemoved: { Superseded: number; Expired: number };
  deadLetters: Pick<DeadLetterReads, 'deadLetterCounts'>;
  storageWatch?: Pick<StorageWatch, 'status' | 'diskStatus'>;
  /** The oldest message's and entry's age, on the clock that never steps where this run saw them arrive. */
  ages: Pick<StoredAges, 'oldestSeconds'>;
  decisions: Pick<DecisionMeter, 'counts'>;
}

/** The service's state as the metrics name it. */
export async function metricsSnapshot(deps: MetricsSources, now: Date): Promise<MetricsSnapshot> {
  // Counted first: a long queue's count lets the event loop run between its slices.
  const { sortation, destination, outbox: outboxDepth } = await deps.counts.figures();
  const oldest = deps.ages.oldestSeconds(deps, now.getTime());
  const queue = (q: 'sortation' | 'destination', { waiting, handedOut }: QueueFigures) => {
    const d = deps.dispatchers[q];
    return {
      ready: waiting,
      unacked: handedOut,
      oldestAgeSeconds: oldest[q],
      waitingClients: d.waiting,
    };
  };
  const link = deps.link.status();
  // A counter the status may not have (test mode's offline link has none).
  const n = (key: string) => {
    const value: unknown = Reflect.get(link, key);
    return typeof value === 'number' ? value : 0;
  };
  const storage = deps.storage.status();
  const decided = deps.decisions.counts();
  return {
    queues: { sortation: queue('sortation', sortation), destination: queue('destination', destination) },
    outbox: { depth: outboxDepth, oldestAgeSeconds: oldest.outbox },
    link: {
      up: link.Connected === true,
      refusing: link.State === 'Refusing',
      telegramsIn: n('TelegramsIn'),
      telegramsOut: n('TelegramsOut'),
      resends: n('Resends'),
      naksSent: n('NaksSent'),
      naksReceived: n('NaksReceived'),
      duplicatesReceived: n('DuplicatesReceived'),
      reconnects: n('Reconnects'),
      connectionsLost: n('ConnectionsLost'),
      connectAttemptsFailed: n('ConnectAttemptsFailed'),
      droppedAssignments: n('DroppedAssignments'),
      droppedSettings: n('DroppedSettings'),
    },
    storage: {
      state: storage.State,
      pendingWrites: storage.PendingWrites,
      syncs: storage.Syncs,
      ackedBeforeSync: storage.AckedBeforeSync,
      failures: storage.Failures,
    },
    requestsRemoved: { ...deps.requestsRemoved },
    redelivered: deps.dispatchers.sortation.redelivered + deps.dispatchers.destination.redelivered,
    deadLetters: deps.deadLetters.deadLetterCounts(),
    deadLettered: deps.dispatchers.sortation.deadLettered + deps.dispatchers.destination.deadLettered,
    decisions: { awaiting: decided.Awaiting, late: decided.Late },
    ...(deps.storageWatch && { disk: diskSnapshot(deps.storageWatch) }),
  };
}

/** The disk's figures from the watch's last look. */
function diskSnapshot(watch: Pick<StorageWatch, 'status' | 'diskStatus'>): DiskSnapshot {
  const h = watch.status();
  const d = watch.diskStatus();
  return {
    files: { database: h.DatabaseBytes, wal: h.WalBytes, trafficLog: h.TrafficLogBytes },
    boundBytes: h.BoundBytes,
    freeBytes: d.FreeBytes,
    sizeBytes: d.SizeBytes,
    low: d.State === 'Low',
    historyBytesPerDay: h.BytesPerDay,
    historyDaysFit: h.DaysFit,
    retentionCut: h.RetentionMet === false,
    cutRows: h.CutRows,
    cuts: h.Cuts,
  };
}
