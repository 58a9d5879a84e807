// Prometheus metrics (GET /metrics), named by Prometheus conventions: one prefix, base units
// (seconds), `_total` counters, bounded labels (queue, type, route, method, status). Modelled on
// the queue metrics operators know: RabbitMQ's ready/unacked, SQS's visible/in flight, age of the
// oldest message and empty receives.
import './metrics-footprint'; // before prom-client: see the module
import client from 'prom-client';
import { type DelaySummary, EventLoopWatch } from './event-loop';

export const PREFIX = 'sorter_integration_';

/** What the service reports at each scrape (read from its state, nothing stored twice). */
export interface MetricsSnapshot {
  queues: Record<'sortation' | 'destination', { ready: number; unacked: number; oldestAgeSeconds: number | null; waitingClients: number }>;
  outbox: { depth: number; oldestAgeSeconds: number | null };
  link: {
    up: boolean;
    refusing: boolean;
    telegramsIn: number;
    telegramsOut: number;
    resends: number;
    naksSent: number;
    naksReceived: number;
    duplicatesReceived: number;
    reconnects: number;
    connectionsLost: number;
    connectAttemptsFailed: number;
    droppedAssignments: number;
    droppedSettings: number;
  };
  storage: { state: 'Ok' | 'Stalled' | 'Failing'; pendingWrites: number; syncs: number; ackedBeforeSync: number; failures: number };
  requestsRemoved: { Superseded: number; Expired: number };
  redelivered: number;
  /** Messages in the dead letters now, by the queue they left, and moved there since start. */
  deadLetters: Record<'sortation' | 'destination', number>;
  deadLettered: number;
  /** REQUESTs of the last 60 s without an assignment, and those answered late or not at all since start (GET /status: DecisionLatency). */
  decisions: { awaiting: number; late: number };
  /** The disk and the history's bounds, as last looked at (lib/ops/storage-watch.ts); absent where nothing watches it. */
  disk?: DiskSnapshot;
}

/** The disk and the history's bounds at a scrape. */
export interface DiskSnapshot {
  files: { database: number; wal: number; trafficLog: number };
  boundBytes: number | null;
  freeBytes: number | null;
  sizeBytes: number | null;
  low: boolean;
  historyBytesPerDay: number | null;
  historyDaysFit: number | null;
  /** The size bound cuts the history short of HistoryRetentionDays. */
  retentionCut: boolean;
  cutRows: number;
  cuts: number;
}

const seconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A counter made from the scrape's snapshot (Metrics' constructor makes them). */
type TotalOf = (name: string, help: string, value: (s: MetricsSnapshot) => number) => void;

/** The sorter link's running totals, each exported as a counter by `total`. */
function linkTotals(total: TotalOf): void {
  total('telegrams_received_total', 'Telegrams received from the sorter', (s) => s.link.telegramsIn);
  total('telegrams_sent_total', 'Telegrams sent to the sorter', (s) => s.link.telegramsOut);
  total('telegram_resends_total', 'Telegrams sent again after the ACK timeout or a reconnect', (s) => s.link.resends);
  total('telegram_naks_sent_total', 'Negative acknowledgements sent to the sorter', (s) => s.link.naksSent);
  total('telegram_naks_received_total', 'Negative acknowledgements received from the sorter', (s) => s.link.naksReceived);
  total(
    'telegram_repeats_received_total',
    'Telegrams the sorter sent again, acknowledged again and kept once',
    (s) => s.link.duplicatesReceived,
  );
  total('sorter_link_reconnects_total', 'Connections to the sorter made after the first', (s) => s.link.reconnects);
  total('sorter_link_connections_lost_total', 'Connections to the sorter that were up and dropped', (s) => s.link.connectionsLost);
  total('sorter_link_connect_failures_total', 'Connection attempts that never connected', (s) => s.link.connectAttemptsFailed);
  total(
    'assignments_dropped_total',
    'Assignments not sent: past their time to live, or refused by the sorter',
    (s) => s.link.droppedAssignments,
  );
  total('destination_settings_dropped_total', 'Destination settings refused by the sorter', (s) => s.link.droppedSettings);
}

/** The running totals of the queues, the decisions and the storage. */
function serviceTotals(total: TotalOf): void {
  total(
    'requests_superseded_total',
    'REQUESTs taken out of the queue because a newer one for the same item arrived',
    (s) => s.requestsRemoved.Superseded,
  );
  total('requests_expired_total', 'REQUESTs taken out of the queue past MaxRequestAgeSeconds', (s) => s.requestsRemoved.Expired);
  total(
    'messages_dead_lettered_total',
    'Messages moved to the dead letters: handed out MaxDeliveries times without proof of the read',
    (s) => s.deadLettered,
  );
  total(
    'storage_syncs_total',
    'Disk syncs (fsync) of the queue database: each a flush an SD card or eMMC must complete',
    (s) => s.storage.syncs,
  );
  total(
    'storage_acked_before_sync_total',
    'Sorter telegrams acknowledged before their disk sync ended, the disk stalling (AckUnsyncedAfterMs): a power cut during such a stall may lose them',
    (s) => s.storage.ackedBeforeSync,
  );
  total(
    'storage_failures_total',
    'Transactions of the queue database that failed (a full disk, a read-only file): the sorter telegrams in them are NAKed and sent again, POSTs get 503',
    (s) => s.storage.failures,
  );
  total(
    'history_size_cuts_total',
    'Purges of the oldest history made for the size bound (HistoryMaxBytes, HistoryMaxDiskShare, HistoryKeepFreeShare)',
    (s) => s.disk?.cuts ?? 0,
  );
  total('history_size_cut_rows_total', 'History rows those purges took', (s) => s.disk?.cutRows ?? 0);
  total(
    'decisions_late_total',
    'REQUESTs whose assignment came later than LateDecisionMs, or not at all (live mode): items that may have gone round or to the reject chute',
    (s) => s.decisions.late,
  );
  total(
    'messages_redelivered_total',
    'Messages handed out again after a response without proof of its read (possible duplicates)',
    (s) => s.redelivered,
  );
}

/** A gauge made from the scrape's snapshot (Metrics' constructor makes them). */
type GaugeOf = (name: string, help: string, labelNames: string[], set: (g: client.Gauge, s: MetricsSnapshot) => void) => void;

/** Each queue's messages ready and unacknowledged, its oldest message's age, its dead letters and waiting clients. */
function queueGauges(gauge: GaugeOf): void {
  const perQueue = (pick: (q: MetricsSnapshot['queues']['sortation']) => number | null) => (g: client.Gauge, s: MetricsSnapshot) => {
    g.reset();
    for (const q of ['sortation', 'destination'] as const) {
      const v = pick(s.queues[q]);
      if (v !== null) g.set({ queue: q }, v);
    }
  };
  gauge(
    'queue_messages_ready',
    'Messages waiting in the queue, not handed out (RabbitMQ messages_ready, SQS visible)',
    ['queue'],
    perQueue((q) => q.ready),
  );
  gauge(
    'queue_messages_unacked',
    'Messages handed out whose read is not proven yet (RabbitMQ unacked, SQS in flight)',
    ['queue'],
    perQueue((q) => q.unacked),
  );
  gauge(
    'queue_oldest_message_age_seconds',
    'Age of the oldest message in the queue (absent when empty)',
    ['queue'],
    perQueue((q) => q.oldestAgeSeconds),
  );
  gauge(
    'dead_letters',
    'Messages in the dead letters, by the queue they left: handed out MaxDeliveries times without proof of the read (SQS dead-letter queue depth)',
    ['queue'],
    (g, s) => {
      for (const q of ['sortation', 'destination'] as const) g.set({ queue: q }, s.deadLetters[q]);
    },
  );
  gauge(
    'queue_waiting_clients',
    'Long polls waiting on the queue',
    ['queue'],
    perQueue((q) => q.waitingClients),
  );
}

/** The outbox, the sorter link and the storage's state. */
function linkAndStorageGauges(gauge: GaugeOf): void {
  gauge('outbox_messages', 'Assignments and destination settings not yet acknowledged by the sorter', [], (g, s) => g.set(s.outbox.depth));
  // A gauge without labels always has a value (prom-client): 0 for an empty outbox, as SQS's
  // ApproximateAgeOfOldestMessage is 0 for an empty queue.
  gauge('outbox_oldest_message_age_seconds', 'Age of the oldest outbox entry (0 when empty)', [], (g, s) =>
    g.set(s.outbox.oldestAgeSeconds ?? 0),
  );
  gauge(
    'decisions_awaiting',
    'REQUESTs of the last 60 s from the sorter still without an assignment (handed to a WCS or still queued)',
    [],
    (g, s) => g.set(s.decisions.awaiting),
  );
  gauge('sorter_link_up', '1 while the sorter is connected', [], (g, s) => g.set(s.link.up ? 1 : 0));
  gauge(
    'sorter_link_refusing',
    "1 while the sorter's telegrams are refused for a reason that will not pass by itself (GET /status: Sorter.RefusingBecause)",
    [],
    (g, s) => g.set(s.link.refusing ? 1 : 0),
  );
  gauge('storage_pending_writes', 'Writes handed to the writer thread and not yet answered', [], (g, s) => g.set(s.storage.pendingWrites));
  gauge('storage_state', '1 for the storage state in force (Ok, Stalled: a lock or a slow disk, Failing)', ['state'], (g, s) => {
    for (const state of ['Ok', 'Stalled', 'Failing']) g.set({ state }, s.storage.state === state ? 1 : 0);
  });
}

/** The disk and the history's bounds as gauges (GET /status: Storage.Disk, Storage.History). */
function diskGauges(gauge: GaugeOf): void {
  // A figure not known (a file system that cannot be measured, a history too short to project) is
  // NaN: a gauge without labels is always exported, and 0 would say "nothing fits", "nothing free".
  const known = (g: client.Gauge, v: number | null | undefined) => g.set(v ?? Number.NaN);
  gauge(
    'storage_files_bytes',
    'What the size bound counts, by file: the database, its WAL, the traffic log (Service_PLC.log and its rotated files)',
    ['file'],
    (g, s) => {
      g.reset();
      if (!s.disk) return;
      g.set({ file: 'database' }, s.disk.files.database);
      g.set({ file: 'wal' }, s.disk.files.wal);
      g.set({ file: 'traffic_log' }, s.disk.files.trafficLog);
    },
  );
  gauge(
    'storage_bound_bytes',
    'The most the database, its WAL and the traffic log may take together: HistoryMaxBytes, or HistoryMaxDiskShare of the file system, less what HistoryKeepFreeShare keeps free',
    [],
    (g, s) => known(g, s.disk?.boundBytes),
  );
  gauge('disk_free_bytes', "Free on the database's file system", [], (g, s) => known(g, s.disk?.freeBytes));
  gauge('disk_size_bytes', "The database's file system's size", [], (g, s) => known(g, s.disk?.sizeBytes));
  gauge(
    'disk_low',
    "1 while the database's file system has less free than the reserve (GET /status: Storage.Disk.State Low): the disk is filling",
    [],
    (g, s) => g.set(s.disk?.low ? 1 : 0),
  );
  gauge(
    'history_bytes_per_day',
    "The history's bytes a day at the rate it shows itself (NaN while it spans less than 10 s and no rate was measured before)",
    [],
    (g, s) => known(g, s.disk?.historyBytesPerDay),
  );
  // In seconds, Prometheus's base unit (promtool's check): a day is 86,400.
  gauge(
    'history_fit_seconds',
    'How long a history the size bound holds at that rate, in seconds (GET /status: Storage.History.DaysFit in days; NaN while unknown)',
    [],
    (g, s) => known(g, s.disk?.historyDaysFit == null ? null : Math.round(s.disk.historyDaysFit * 86_400)),
  );
  gauge('history_retention_cut', '1 while the size bound cuts the history short of HistoryRetentionDays at the current rate', [], (g, s) =>
    g.set(s.disk?.retentionCut ? 1 : 0),
  );
}

/** The registry and the instruments the service updates as things happen. */
export class Metrics {
  readonly registry = new client.Registry();
  readonly messagesIn = new client.Counter({
    name: `${PREFIX}messages_received_total`,
    help: 'Messages from the sorter committed to a queue',
    labelNames: ['queue', 'type'] as const,
    registers: [this.registry],
  });
  readonly handedOut = new client.Counter({
    name: `${PREFIX}messages_delivered_total`,
    help: 'Messages handed to a WCS client (a response written; a redelivery counts again)',
    labelNames: ['queue', 'type'] as const,
    registers: [this.registry],
  });
  readonly emptyReceives = new client.Counter({
    name: `${PREFIX}empty_receives_total`,
    help: 'GETs answered 204: nothing arrived within timeOut',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new client.Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'HTTP requests by route and status, from receipt to response (a long poll includes its wait)',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: seconds,
    registers: [this.registry],
  });
  readonly writeSeconds = new client.Histogram({
    name: `${PREFIX}storage_write_duration_seconds`,
    help: 'From a write handed to the writer thread to its answer after the commit (group commit wait included)',
    buckets: seconds,
    registers: [this.registry],
  });
  readonly batchWrites = new client.Histogram({
    name: `${PREFIX}storage_commit_writes`,
    help: 'Writes committed together in one transaction (pipelined group commit)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });
  readonly wakeSeconds = new client.Histogram({
    name: `${PREFIX}wake_latency_seconds`,
    help: 'From a sorter telegram arriving to the response handing its message to a client that was waiting for it',
    buckets: seconds,
    registers: [this.registry],
  });
  readonly decisionSeconds = new client.Histogram({
    name: `${PREFIX}decision_latency_seconds`,
    help: 'From a REQUEST arriving from the sorter to the assignment for its TrackID accepted from the WCS',
    buckets: seconds,
    registers: [this.registry],
  });

  constructor(snapshot: () => MetricsSnapshot | Promise<MetricsSnapshot>, eventLoop: EventLoopWatch = new EventLoopWatch()) {
    // prom-client's event loop lag samples every 10 ms for ever, idle or not: its sampler is given
    // a period it never reaches (24 days), and its figures come from the service's, which samples
    // only while there is work (lib/ops/event-loop.ts).
    client.collectDefaultMetrics({ register: this.registry, prefix: PREFIX, eventLoopMonitoringPrecision: 2 ** 31 - 1 });
    eventLoopLag(this.registry, eventLoop.reader());
    const r = [this.registry];
    // One snapshot per scrape, taken before its collectors run and shared by them all (a
    // collector run outside registry.metrics() sets nothing).
    let current: MetricsSnapshot | null = null;
    const gauge = (name: string, help: string, labelNames: string[], set: (g: client.Gauge, s: MetricsSnapshot) => void) =>
      new client.Gauge({
        name: `${PREFIX}${name}`,
        help,
        labelNames,
        registers: r,
        collect() {
          if (current) set(this, current);
        },
      });
    // A running total the service already keeps, exported as a counter.
    const total = (name: string, help: string, value: (s: MetricsSnapshot) => number) =>
      new client.Counter({
        name: `${PREFIX}${name}`,
        help,
        registers: r,
        collect() {
          if (!current) return;
          this.reset();
          this.inc(value(current));
        },
      });
    queueGauges(gauge);
    linkAndStorageGauges(gauge);
    diskGauges(gauge);
    gauge('up', '1: the service answers', [], (g) => g.set(1));
    linkTotals(total);
    serviceTotals(total);
    // Each scrape takes a snapshot first (the queues counted, a long one a slice at a time); the
    // collectors read the latest, so two scrapes at once each read a whole one.
    const metrics = this.registry.metrics.bind(this.registry);
    this.registry.metrics = async () => {
      current = await snapshot();
      return metrics();
    };
  }
}

/** prom-client's event loop delay figures (nodejs_eventloop_lag_min_seconds ...), read from `look` at each scrape. */
function eventLoopLag(registry: client.Registry, look: () => DelaySummary): void {
  const figures = {
    min: 'minimum',
    max: 'maximum',
    mean: 'mean of the',
    stddev: 'standard deviation of the',
    p50: '50th percentile of the',
    p90: '90th percentile of the',
    p99: '99th percentile of the',
  } as const;
  let seen: DelaySummary | null = null;
  for (const [figure, words] of Object.entries(figures) as Array<[keyof DelaySummary, string]>) {
    const name = `${PREFIX}nodejs_eventloop_lag_${figure}_seconds`;
    registry.removeSingleMetric(name);
    new client.Gauge({
      name,
      help: `The ${words} recorded event loop delays (sampled while the service has work; 0 when it had none).`,
      registers: [registry],
      collect() {
        // One look per scrape: the min's collector (the first) takes it, the others read it.
        if (figure === 'min') seen = look();
        this.set((seen ?? look())[figure] / 1000);
      },
    });
  }
}
