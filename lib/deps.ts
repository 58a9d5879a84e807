// What the functions may ask for: the running service's parts, each handler taking the part it
// declares. Built by lib/service.ts.
import type { ServiceStores } from '../db/service-stores';
import type { StorageStatus } from '../db/storage-status';
import type { QueueName } from '../model/messages';
import type { SorterLink } from './link/sorter-link-status';
import type { DecisionMeter, WakeMeter } from './ops/latency';
import type { LastHour } from './ops/last-hour';
import type { Metrics } from './ops/metrics';
import type { StorageWatch } from './ops/storage-watch';
import type { ItemTimeline } from '../db/item-trace';
import type { Config } from './process/config';
import type { Logger } from './process/logger';
import type { AlarmMonitor } from './ops/alarms';
import type { DeliveryTracker } from './http/read-proof/delivery';
import type { QueueDispatcher, UncommittedMessages } from './queue/dispatcher';
import type { StoredAges } from './queue/arrivals';
import type { LiveCounts } from './queue/live-counts';
import type { ReplaySummary } from './testmode/seed';
/** Everything the handlers may ask for. Each handler declares the part it uses. */
export interface Deps {
  testMode: boolean;
  version: string;
  startedAt: Date;
  clock: () => Date;
  state: () => 'Running' | 'Stopping';
  settings: Config;
  store: ServiceStores['queues'];
  outbox: ServiceStores['outbox'];
  history: ServiceStores['history'];
  /** The link's tables: the sorter's messages with their numbers, sessions, dropped entries. */
  links: ServiceStores['links'];
  /** Messages handed out MaxDeliveries times without proof of the read, out of their queues. */
  deadLetters: ServiceStores['deadLetters'];
  /** The latest state of every destination (the dashboard's board). */
  board: ServiceStores['board'];
  dispatchers: { [Q in QueueName]: QueueDispatcher<Q> };
  /** Messages from the sorter whose commit is under way, handed out already (HandOutBeforeCommit). */
  uncommitted: UncommittedMessages;
  /** When this run's queued messages and outbox entries arrived, on the clock that never steps: their ages. */
  ages: StoredAges;
  /** The queues' and the outbox's figures, a long table counted a slice at a time. */
  counts: LiveCounts;
  /** Peers whose latest commit of a message failed (handlers/sorter-message.ts). */
  failingPeers: Set<string>;
  link: SorterLink;
  replay: ReplaySummary | null;
  /** REQUESTs taken out of the sortation queue without reaching a WCS, since start. */
  requestsRemoved: { Superseded: number; Expired: number };
  /** Wake latency of messages from the sorter link that found a client waiting. */
  wake: WakeMeter;
  /** Decides when a handed-out message was read (Delivery setting); attached to the HTTP listener by the server. */
  deliveries: DeliveryTracker;
  /** The disk: what the stores take, the history's size bound and the days that fit, the disk's free space. */
  storageWatch: StorageWatch;
  /** The writer thread's state: committing, stalled (lock, disk) or failing. */
  storage: { status(): StorageStatus; prompt(): boolean };
  /** The database's schema version, and the newest this version of the service knows. */
  schema: { applied: number; known: number };
  /** The event loop's delay, for the liveness check; sampled from `busy` (a request, a telegram, a scheduled run) until a second of quiet. */
  eventLoop: { delayP99Ms(): number; busy(): void };
  /** What happened to an item (GET /items/{TrackID}), read from the database. */
  items: { timeline(trackId: string): Promise<ItemTimeline | null> };
  /** Prometheus metrics (GET /metrics), and the REQUEST-to-assignment meter. */
  metrics: Metrics;
  decisions: DecisionMeter;
  /** The dashboard's last hour: samples every ChartSampleSeconds, in memory. */
  lastHour: LastHour;
  log: Logger;
  /** The alarms: raised and cleared by their conditions, acknowledged by operators. */
  alarms: AlarmMonitor;
}
