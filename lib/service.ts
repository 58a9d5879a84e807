// The running service outside HTTP: the writer, the stores, the dispatchers, the delivery
// tracker, the sorter link.
import path from 'node:path';
import { Checkpointer } from '../db/checkpointer';
import { type Db, PAGE_SIZE, defaultMigrationsDir, openReader } from '../db/connection';
import { pragmaNumber } from '../db/sqlite';
import { readMigrations } from '../db/migrate';
import { EventLoopWatch } from './ops/event-loop';
import { DecisionMeter, WakeMeter } from './ops/latency';
import { LastHour } from './ops/last-hour';
import { readLastHour } from './ops/last-hour-reading';
import { liveCounts } from './queue/live-counts';
import { Metrics } from './ops/metrics';
import { metricsSnapshot } from './ops/metrics-snapshot';
import { itemTrace } from '../db/item-trace';
import type { DeadLetterInfo } from '../db/dead-letter-store';
import { type ServiceStores, serviceStores } from '../db/service-stores';
import { Writer } from '../db/writer';
import { type ExternalChangeWatch, watchExternalChanges } from './queue/change-watcher';
import { EmptyTableMemo, QueueDispatcher, UncommittedMessages } from './queue/dispatcher';
import { type Config, databaseFile } from './process/config';
import { DeliveryTracker } from './http/read-proof/delivery';
import type { Logger } from './process/logger';
import type { QueueName } from '../model/messages';
import { seedFromReplay } from './testmode/seed';
import { TcpSorterLink, steadyWallMs } from './link/sorter-link';
import { offlineLink } from './link/sorter-link-status';
import { type Manifest, loadManifest } from './functions/manifest';
import { type TelegramReceiver, telegramTrigger } from './functions/telegram-trigger';
import { TrafficLogWriter } from './link/traffic-log';
import type { Layout } from './layout/table';
import { sorterLayout } from './layout/site-layout';
import { type TelegramWire, layoutWire } from './layout/wire';
import { WINDOW_MAX_WRITES } from '../db/commit-plan';
import { type BoundSettings, walAllowance, walCheckMs, walLimitsFor } from '../db/history-bound';
import { fileBytes, fileSystemOf, measureStorage } from '../db/storage-use';
import { StorageWatch } from './ops/storage-watch';
import type { Deps } from './deps';
import { type AlarmMonitor, alarmGauge } from './ops/alarms';
import { alarmMonitor } from './ops/alarm-sources';
import { errorCode } from './process/errors';
import { everyBeat } from './host/beat';
import { StoredAges } from './queue/arrivals';

export type { Deps } from './deps';

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** Client addresses logged for dead letters, at most: one line per client, not per message. */
const DEAD_LETTER_CLIENTS_LOGGED = 1000;

/**
 * A dead letter is logged once per client address, with the reason (a client that cannot prove
 * its reads makes every message it takes a dead letter); each one at debug.
 */
function deadLetterLog(log: Logger, maxDeliveries: number) {
  const logged = new Set<string>();
  return (stored: { id: number; queue: QueueName }, info: DeadLetterInfo) => {
    const client = info.clientAddress ?? 'unknown';
    const fields = { queue: stored.queue, messageId: stored.id, attempts: info.attempts, client, lastReturn: info.lastReturn };
    if (logged.has(client) || logged.size >= DEAD_LETTER_CLIENTS_LOGGED) return log.debug(fields, 'message moved to the dead letters');
    logged.add(client);
    log.warn(
      fields,
      `client ${client} closes connections without proof of read: see docs/queue-semantics.md ("Dead letters"). Message ${stored.id} of the ${stored.queue} queue was handed out ${info.attempts} times (MaxDeliveries ${maxDeliveries}) and moved to the dead letters; GET /dead-letters lists them, POST /dead-letters/requeue sends them back. Further dead letters from this client are logged at debug`,
    );
  };
}

/** The running service's state outside HTTP: the database, the queues, the sorter link. */
export interface Service {
  deps: Deps;
  /** The main thread's read-only connection (for tests and tools that look at the tables). */
  db: Db;
  writer: Writer;
  databaseFile: string;
  /** Connect to the sorter (live mode): once the HTTP server listens and has run its hot paths once. */
  startLink(): void;
  /** Answer all waiting polls (204) and stop taking new ones. */
  drain(): void;
  /** Stop the link, finish the writes, close the database. */
  close(): Promise<void>;
}

/** The clock that never steps the link and the alarms time by: the given one; else none under a clock driven by hand; else steadyWallMs. */
const steadyOf = (options: ServiceOptions): (() => number) | undefined => options.steadyMs ?? (options.clock ? undefined : steadyWallMs);

/** Options for createService. */
export interface ServiceOptions {
  home: string;
  config: Config;
  log: Logger;
  version: string;
  clock?: () => Date;
  /**
   * What the sorter link times by (lib/link/sorter-link.ts), and what the alarms tell a step of
   * `clock` by: default `steadyWallMs`, a clock that never steps, unless `clock` is given (a test
   * driving time by hand): then `clock`, and no step is told.
   */
  steadyMs?: () => number;
  /** The functions and their triggers (default: the project's manifest.json). */
  manifest?: Manifest;
  /** The sorter's telegram layout, validated (default: read from Sorter.Layout). */
  layout?: Layout;
  /**
   * The run before stopped cleanly (lib/process/instance-lock.ts): what the sorter resends when it
   * reconnects was never handed out, so it is not marked as a possible duplicate. Default false.
   */
  lastStopClean?: boolean;
}

/** The storage: the writer thread, its checkpoints, the main thread's read connection, the stores. */
async function openStorage(file: string, config: Config, log: Logger, metrics: Metrics, windowMaxWrites: number) {
  const writer = await Writer.start({
    onCommit: (writes, waitedMs) => {
      metrics.batchWrites.observe(writes);
      for (const ms of waitedMs) metrics.writeSeconds.observe(ms / 1000);
    },
    file,
    synchronous: config.Synchronous,
    groupCommit: config.GroupCommit,
    timing: { windowMs: config.CommitWindowMs, holdMs: config.UnsyncedHoldMs, maxWrites: windowMaxWrites },
    postGroupMs: config.PostGroupMs,
    ackUnsyncedAfterMs: config.AckUnsyncedAfterMs,
    onSlowSync: (ms, answeredEarly) =>
      log.warn(
        { storage: 'Stalled', syncMs: ms, ackedBeforeSync: answeredEarly },
        `storage: a disk sync took ${ms} ms (the disk stalled; commits went on beside it); ${answeredEarly} sorter telegrams were acknowledged before their sync meanwhile (AckUnsyncedAfterMs)`,
      ),
    onState: (state, detail) =>
      state === 'Ok'
        ? log.info({ storage: state }, `storage: ${detail}`)
        : log.error({ storage: state, reason: detail }, `storage ${state.toLowerCase()}: ${detail}`),
  });
  if (writer.status().ReadOnly)
    log.error(
      { database: file },
      'the database file is read-only: messages can be read, but nothing can be written (see GET /status, Storage)',
    );
  // Under a small size bound the WAL starts over sooner, leaving the history its share (db/history-bound.ts).
  const walLimits = walLimitsFor(configuredBound(config, file));
  const checkpointer = Checkpointer.start(
    file,
    (mode, waitMs) => writer.run('checkpoint', [mode, waitMs]),
    undefined,
    walLimits,
    walCheckMs(walLimits),
  );
  const db = openReader(file);
  const pageSize = pragmaNumber(db, 'page_size');
  log.info({ database: file, testMode: config.TestMode, pageSize }, 'queue database open');
  if (pageSize > PAGE_SIZE) {
    log.info(
      { pageSize, recommended: PAGE_SIZE },
      `the queue database has ${pageSize}-byte pages, made before ${PAGE_SIZE} became the default: converting it writes fewer bytes per item to the disk (docs/operations.md, "Fewer writes for an existing database")`,
    );
  }
  return { writer, checkpointer, db, stores: serviceStores(db, writer) };
}

/** The size bound as configured: HistoryMaxBytes, or HistoryMaxDiskShare of the database's file system (null: its size unknown). */
function configuredBound(config: Config, file: string): number | null {
  const { sizeBytes } = fileSystemOf(path.dirname(file));
  return config.HistoryMaxBytes ?? (sizeBytes !== null ? Math.floor(config.HistoryMaxDiskShare * sizeBytes) : null);
}

/** The disk's watch: the database, its WAL and the traffic log (when kept) against the history's size bound. */
function storageWatch(
  home: string,
  file: string,
  config: Config,
  db: Db,
  history: ServiceStores['history'],
  log: Logger,
  clock: () => Date,
): StorageWatch {
  const s = config.Sorter;
  const trafficLog = !config.TestMode && s.TrafficLog ? path.join(home, 'Service_PLC.log') : undefined;
  const walLimits = walLimitsFor(configuredBound(config, file));
  const settings: BoundSettings = {
    maxBytes: config.HistoryMaxBytes,
    maxDiskShare: config.HistoryMaxDiskShare,
    keepFreeShare: config.HistoryKeepFreeShare,
    retentionDays: config.HistoryRetentionDays,
    walAllowanceBytes: walAllowance(walLimits),
    trafficLogMaxBytes: trafficLog ? s.TrafficLogMaxBytes * (s.TrafficLogFiles + 1) : 0,
  };
  const walPastRestart = () => fileBytes(`${file}-wal`) >= walLimits.restartBytes;
  return new StorageWatch(
    settings,
    () => measureStorage(db, history, { database: file, trafficLog }),
    (share) => history.timeAtShare(share),
    clock,
    log,
    walPastRestart,
  );
}

/** The two queues' dispatchers, and the watch for rows other processes write. */
function queueDispatchers(stores: ServiceStores, db: Db, config: Config, log: Logger, clock: () => Date) {
  let watch: ExternalChangeWatch | null = null;
  const options = {
    onWaiting: () => watch?.waiting(),
    onStoreError: (err: unknown, stored: { id: number; queue: QueueName }) =>
      log.error(
        { err, queue: stored.queue, id: stored.id },
        'could not remove a delivered message (or move it to the dead letters); it stays claimed and the removal is tried again (a dead letter stays queued)',
      ),
    maxDeliveries: config.MaxDeliveries,
    onDeadLetter: deadLetterLog(log, config.MaxDeliveries),
    clock,
  };
  // The queue tables' head query is spared while they hold only claimed rows; another process's
  // row is seen within ExternalChangePollMs, as the change watcher sees it for a waiting GET.
  const uncommitted = new UncommittedMessages(stores.queues.lastId, new EmptyTableMemo(config.ExternalChangePollMs));
  const store = uncommitted.over({ head: stores.queues.head, deliver: stores.queues.deliver, deadLetter: stores.deadLetters.deadLetter });
  const dispatchers = {
    sortation: new QueueDispatcher('sortation', store, options),
    destination: new QueueDispatcher('destination', store, options),
  };
  watch = watchExternalChanges(db, [dispatchers.sortation, dispatchers.destination], config.ExternalChangePollMs);
  const stopWatching = watch.stop;
  return { dispatchers, uncommitted, stopWatching };
}

/** The sorter's traffic log (Service_PLC.log in the home), if Sorter.TrafficLog is on. */
function trafficLog(home: string, s: Config['Sorter'], log: Logger): TrafficLogWriter | undefined {
  if (!s.TrafficLog) return undefined;
  const file = path.join(home, 'Service_PLC.log');
  return new TrafficLogWriter(
    file,
    { maxBytes: s.TrafficLogMaxBytes, keep: s.TrafficLogFiles, minFreeBytes: s.TrafficLogMinFreeBytes },
    {
      failed: (err) =>
        log.error(
          { err, file },
          `traffic log: cannot write ${file} (${errorCode(err) ?? err.message}); telegrams are not logged there until it can (tried every 5 s). The link and the database are not affected`,
        ),
      recovered: (dropped) =>
        log.warn({ file, dropped }, `traffic log: writing ${file} again; ${dropped} telegram lines could not be logged meanwhile`),
      reserve: (paused, free, dropped) =>
        paused
          ? log.error(
              { file, freeBytes: free, minFreeBytes: s.TrafficLogMinFreeBytes },
              `traffic log: paused, ${mb(free)} free on its disk is below Sorter.TrafficLogMinFreeBytes (${mb(s.TrafficLogMinFreeBytes)}), kept for the queue database; telegrams are not logged until there is more`,
            )
          : log.warn(
              { file, freeBytes: free, dropped },
              `traffic log: writing ${file} again (${mb(free)} free); ${dropped} telegram lines could not be logged meanwhile`,
            ),
    },
  );
}

/** The live link to the sorter, each data telegram going to `receive` (the telegram trigger). */
async function sorterLink(
  options: ServiceOptions,
  stores: ServiceStores,
  receive: TelegramReceiver,
  clock: () => Date,
  wire: TelegramWire,
) {
  const { config, log, home } = options;
  const s = config.Sorter;
  const traffic = trafficLog(home, s, log);
  // Our session with the sorter must exist before the link starts. If the storage cannot write
  // (read-only file), the one committed on an earlier run serves; without one the link cannot run.
  await stores.links.ensurePeerSession(s.PeerName, clock().toISOString()).catch((err) => {
    if (!stores.links.session(s.PeerName)) throw err;
  });
  const link = new TcpSorterLink({
    settings: s,
    outbox: stores.outbox,
    links: stores.links,
    log,
    clock,
    steadyMs: steadyOf(options),
    traffic,
    receive,
    wire,
    lastStopClean: options.lastStopClean,
  });
  return { link, traffic };
}

/**
 * Build the service from validated config: start the writer thread (it opens and migrates the
 * database; test mode: its own file, emptied and re-seeded from the replay file), open the read
 * connection, and wire the queues, outbox and link.
 */
export async function createService(options: ServiceOptions): Promise<Service> {
  const { config, log } = options;
  const clock = options.clock ?? (() => new Date());
  const file = databaseFile(options.home, config);
  const eventLoop = new EventLoopWatch();
  const metrics = new Metrics(() => metricsSnapshot(deps, clock()), eventLoop);
  const wire = layoutWire(options.layout ?? sorterLayout(options.home, config.Sorter));
  const { writer, checkpointer, db, stores } = await openStorage(file, config, log, metrics, commitWindowWrites(wire, config));
  const replay = config.TestMode ? await seedFromReplay(options.home, stores.queues, log, clock, undefined, wire) : null;
  const { dispatchers, uncommitted, stopWatching } = queueDispatchers(stores, db, config, log, clock);
  const receive = telegramTrigger(options.manifest ?? loadManifest(), () => deps);
  const { link, traffic } = config.TestMode
    ? { link: offlineLink(null), traffic: undefined }
    : await sorterLink(options, stores, receive, clock, wire);
  let state: 'Running' | 'Stopping' = 'Running';
  // At start: what the stores take, and how many days of history fit at the rate the history shows.
  const watch = storageWatch(options.home, file, config, db, stores.history, log, clock);
  watch.logProjection('start');
  const drain = () => {
    state = 'Stopping';
    dispatchers.sortation.close();
    dispatchers.destination.close();
  };
  // Made once everything exists; the metrics (above) read it at each scrape, and the telegram
  // trigger at each telegram (none can come before).
  const deps: Deps = {
    ...meters(metrics, config),
    testMode: config.TestMode,
    version: options.version,
    startedAt: clock(),
    clock,
    state: () => state,
    settings: config,
    ...storeDeps(stores),
    dispatchers,
    uncommitted,
    ages: new StoredAges(clock, steadyOf(options)),
    counts: liveCounts({ store: stores.queues, outbox: stores.outbox, dispatchers }),
    failingPeers: new Set(),
    link,
    replay,
    requestsRemoved: { Superseded: 0, Expired: 0 },
    deliveries: deliveryTracker(config, clock),
    storage: writer,
    storageWatch: watch,
    schema: schemaVersions(db),
    eventLoop,
    items: { timeline: itemTrace(db) },
    log,
    // Set just below: the monitor reads the other deps.
    alarms: undefined as unknown as AlarmMonitor,
  };
  deps.alarms = alarmMonitor(deps, stores.alarms, file, options.lastStopClean === false, steadyOf(options));
  alarmGauge(metrics.registry, deps.alarms);
  const stopSampling = sampleLastHour(deps, config);
  const stopAlarms = () => deps.alarms.stop();
  const parts = { drain, stopAlarms, stopSampling, eventLoop, stopWatching, dispatchers, link, checkpointer, writer, traffic, db };
  return { deps, db, writer, databaseFile: file, startLink: () => link.start(), drain, close: () => closeService(parts) };
}

/**
 * How many writes the commit window may hold: a sorter that may send only so many telegrams
 * before their ACKs (one, in a stop-and-wait layout) is never kept waiting by a window holding
 * that many.
 */
export function commitWindowWrites(wire: TelegramWire, config: Config): number {
  const s = config.Sorter;
  const { window } = wire.settings({ heartbeatMs: s.HeartbeatMs, ackTimeoutMs: s.AckTimeoutMs, window: s.Window });
  return Math.min(WINDOW_MAX_WRITES, window);
}

/** The stores as the handlers' deps name them. */
function storeDeps(stores: ServiceStores) {
  return {
    store: stores.queues,
    outbox: stores.outbox,
    history: stores.history,
    links: stores.links,
    deadLetters: stores.deadLetters,
    board: stores.board,
  };
}

/** When a handed-out message leaves its queue (Delivery, VisibilityTimeoutSeconds, DeliveryCloseGraceMs). */
function deliveryTracker(config: Config, clock: () => Date): DeliveryTracker {
  return new DeliveryTracker({
    mode: config.Delivery,
    visibilityTimeoutMs: config.VisibilityTimeoutSeconds * 1000,
    closeGraceMs: config.DeliveryCloseGraceMs,
    clock,
  });
}

/** The schema's version in the database, and the newest this build knows. */
function schemaVersions(db: Db): { applied: number; known: number } {
  return { applied: pragmaNumber(db, 'user_version'), known: Math.max(0, ...readMigrations(defaultMigrationsDir).map((m) => m.version)) };
}

/** Stop taking work, let the reads already answered commit (briefly), then stop every part, the storage last. */
async function closeService(p: {
  drain: () => void;
  stopAlarms: () => void;
  stopSampling: () => void;
  eventLoop: EventLoopWatch;
  stopWatching: () => void;
  dispatchers: Deps['dispatchers'];
  link: Deps['link'];
  checkpointer: { stop(): Promise<void> };
  writer: { close(): Promise<void> };
  traffic: { close(): Promise<void> } | undefined;
  db: { close(): unknown };
}): Promise<void> {
  p.drain();
  p.stopAlarms();
  p.stopSampling();
  p.eventLoop.stop();
  p.stopWatching();
  // Responses already read commit their messages a moment later: let them, briefly.
  for (let i = 0; i < 200 && p.dispatchers.sortation.inFlight + p.dispatchers.destination.inFlight > 0; i++)
    await new Promise((r) => setTimeout(r, 10));
  await p.link.stop();
  await p.checkpointer.stop();
  await p.writer.close();
  await p.traffic?.close();
  p.db.close();
}

/** The metrics, the two latency meters that feed them, and the last hour's samples. */
function meters(metrics: Metrics, config: Config) {
  const wake = new WakeMeter();
  wake.observe = (ms) => metrics.wakeSeconds.observe(ms / 1000);
  const lastHour = new LastHour(config.LateDecisionMs);
  const decisions = new DecisionMeter(
    (ms) => {
      metrics.decisionSeconds.observe(ms / 1000);
      lastHour.decided(ms);
    },
    { lateMs: config.LateDecisionMs },
  );
  return { metrics, wake, decisions, lastHour };
}

/** Sample the last hour now and at each multiple of ChartSampleSeconds of the clock (in memory only, lib/host/beat.ts); returns its stop. */
function sampleLastHour(deps: Deps, config: Config): () => void {
  const sample = () => {
    readLastHour(deps, deps.metrics, deps.clock(), deps.testMode)
      .then((r) => deps.lastHour.record(r))
      .catch((err) => deps.log.warn({ err }, "the dashboard's last hour: a sample could not be read"));
  };
  sample();
  return everyBeat(config.ChartSampleSeconds * 1000, sample);
}
