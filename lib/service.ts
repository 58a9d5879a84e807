import path from 'node:path';
import { type Db, openDatabase } from '../db/connection';
import { type HistoryStore, createHistoryStore } from '../db/history-store';
import { type OutboxStore, createOutboxStore } from '../db/outbox-store';
import { createLinkStore } from '../db/link-store';
import { type QueueStore, createQueueStore } from '../db/queue-store';
import { watchExternalChanges } from './change-watcher';
import { type Config, databaseFile } from './config';
import { QueueDispatcher } from './dispatcher';
import { Committer } from './committer';
import { DeliveryTracker } from './delivery';
import { WakeMeter } from './latency';
import type { Logger } from './logger';
import type { QueueName, SorterMessage } from './messages';
import { type ReplaySummary, seedFromReplay } from './seed';
import { type SorterLink, TcpSorterLink, offlineLink } from './sorter-link';
import { TrafficLogWriter } from './traffic-log';

/** Everything the handlers may ask for. Each handler declares the part it uses. */
export interface Deps {
  testMode: boolean;
  version: string;
  startedAt: Date;
  clock: () => Date;
  state: () => 'Running' | 'Stopping';
  settings: Config;
  store: QueueStore;
  outbox: OutboxStore;
  history: HistoryStore;
  dispatchers: { [Q in QueueName]: QueueDispatcher<Q> };
  link: SorterLink;
  replay: ReplaySummary | null;
  /** Wake latency of messages from the sorter link that found a client waiting. */
  wake: WakeMeter;
  /** Decides when a handed-out message was read (Delivery setting); attached to the HTTP listener by the server. */
  deliveries: DeliveryTracker;
  /** Run a write durably (group commit); resolves once committed. */
  commit: <T>(fn: () => T) => Promise<T>;
  committer: Committer;
  log: Logger;
}

/** The running service's state outside HTTP: the database, the queues, the sorter link. */
export interface Service {
  deps: Deps;
  db: Db;
  databaseFile: string;
  /** Commit messages from the sorter and wake waiting clients. */
  publish(messages: SorterMessage[]): number[];
  /** Answer all waiting polls (204) and stop taking new ones. */
  drain(): void;
  /** Stop the link and close the database. */
  close(): Promise<void>;
}

/** Options for createService. */
export interface ServiceOptions {
  home: string;
  config: Config;
  log: Logger;
  version: string;
  clock?: () => Date;
}

/**
 * Build the service from validated config: open and migrate the database (test mode: its own
 * file, emptied and re-seeded from the replay file), and wire the queues, outbox and link.
 */
export async function createService(options: ServiceOptions): Promise<Service> {
  const { config, log } = options;
  const clock = options.clock ?? (() => new Date());
  const file = databaseFile(options.home, config);
  const db = openDatabase(file, { synchronous: config.Synchronous });
  const store = createQueueStore(db);
  const replay = config.TestMode ? await seedFromReplay(options.home, store, log, clock) : null;

  const committer = new Committer(db, config.GroupCommit);
  const commit = <T>(fn: () => T) => committer.run(fn);
  const onCommitError = (err: unknown, stored: { id: number; queue: QueueName }) =>
    log.error({ err, queue: stored.queue, id: stored.id }, 'could not remove a delivered message; it stays queued and may be delivered again');
  const dispatchers = {
    sortation: new QueueDispatcher('sortation', store, onCommitError, commit),
    destination: new QueueDispatcher('destination', store, onCommitError, commit),
  };
  const stopWatching = watchExternalChanges(db, [dispatchers.sortation, dispatchers.destination], config.ExternalChangePollMs);
  const outbox = createOutboxStore(db);
  const notifyAll = () => {
    dispatchers.sortation.notify();
    dispatchers.destination.notify();
  };
  const wake = new WakeMeter();
  const deliveries = new DeliveryTracker({
    mode: config.Delivery,
    visibilityTimeoutMs: config.VisibilityTimeoutSeconds * 1000,
    closeGraceMs: config.DeliveryCloseGraceMs,
    clock,
  });
  let traffic: TrafficLogWriter | undefined;
  let link: SorterLink;
  if (config.TestMode) {
    link = offlineLink(null);
  } else {
    const s = config.Sorter;
    traffic = s.TrafficLog ? new TrafficLogWriter(path.join(options.home, 'Service_PLC.log'), s.TrafficLogMaxBytes, s.TrafficLogFiles) : undefined;
    const links = createLinkStore(db, store);
    link = new TcpSorterLink({
      settings: s,
      outbox,
      links,
      log,
      clock,
      traffic,
      commit,
      flush: () => committer.flushIfIdle(),
      async accept(seq, message, arrivedAt) {
        const id = await commit(() => links.accept(s.PeerName, seq, message, clock().toISOString()));
        const queue = message.Type === 'SCAN' ? 'destination' : 'sortation';
        // Wake latency is measured for messages a client is waiting for; the time a message
        // waits for a client to ask is queueing, which depends on the WCS, not on us.
        if (dispatchers[queue].waiting > 0) wake.arrived(queue, id, arrivedAt);
        dispatchers[queue].notify();
      },
    });
  }
  let state: 'Running' | 'Stopping' = 'Running';
  const drain = () => {
    state = 'Stopping';
    dispatchers.sortation.close();
    dispatchers.destination.close();
  };

  const deps: Deps = {
    testMode: config.TestMode,
    version: options.version,
    startedAt: clock(),
    clock,
    state: () => state,
    settings: config,
    store,
    outbox,
    history: createHistoryStore(db),
    dispatchers,
    link,
    replay,
    wake,
    deliveries,
    commit,
    committer,
    log,
  };
  log.info({ database: file, testMode: config.TestMode }, 'queue database open');

  return {
    deps,
    db,
    databaseFile: file,
    publish(messages) {
      const ids = store.enqueue(messages, clock().toISOString());
      notifyAll();
      return ids;
    },
    drain,
    async close() {
      drain();
      stopWatching();
      // Responses already written commit their messages a moment later: let them, briefly.
      for (let i = 0; i < 200 && dispatchers.sortation.inFlight + dispatchers.destination.inFlight > 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      await link.stop();
      committer.flush();
      committer.close();
      traffic?.close();
      db.close();
    },
  };
}
