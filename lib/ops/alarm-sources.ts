// What the alarm monitor reads of the running service at each look: the link, the storage, the
// queues, the outbox, the dead letters, the decisions, the disk. Built by lib/service.ts.
import path from 'node:path';
import type { DeadLetterReads } from '../../db/dead-letter-store';
import type { OutboxReads } from '../../db/outbox-store';
import type { QueueReads } from '../../db/queue-reads';
import type { StorageStatus } from '../../db/storage-status';
import type { QueueName } from '../../model/messages';
import type { SorterLink } from '../link/sorter-link-status';
import type { Config } from '../process/config';
import type { Logger } from '../process/logger';
import { freeBytes } from '../host/disk';
import type { DecisionMeter } from './latency';
import type { StoredAges } from '../queue/arrivals';
import { type AlarmJournal, AlarmMonitor } from './alarms';

/** The parts of the running service the alarm monitor reads (lib/service.ts gives its deps). */
export interface AlarmSources {
  testMode: boolean;
  settings: Pick<Config, 'TestMode' | 'Alarms' | 'LateDecisionMs'>;
  startedAt: Date;
  clock: () => Date;
  log: Logger;
  link: Pick<SorterLink, 'status'>;
  storage: { status(): StorageStatus };
  dispatchers: Record<QueueName, { readonly waiting: number }>;
  decisions: Pick<DecisionMeter, 'late'>;
  store: Pick<QueueReads, 'oldest'>;
  /** The oldest message's and entry's age, on the clock that never steps where this run saw them arrive. */
  ages: Pick<StoredAges, 'oldestSeconds'>;
  outbox: Pick<OutboxReads, 'peek'>;
  deadLetters: Pick<DeadLetterReads, 'deadLetterCounts'>;
}

/** The alarm monitor over the running service, started (its first look now, then every EvaluateSeconds). */
export function alarmMonitor(
  deps: AlarmSources,
  journal: AlarmJournal,
  file: string,
  uncleanStart: boolean,
  steadyMs?: () => number,
): AlarmMonitor {
  const { settings } = deps;
  const folder = path.dirname(file);
  return new AlarmMonitor({
    settings: { ...settings.Alarms, LateDecisionMs: settings.LateDecisionMs },
    journal,
    uncleanStart,
    clock: deps.clock,
    steadyMs,
    log: deps.log,
    observe(now) {
      const link = deps.link.status();
      const storage = deps.storage.status();
      const oldest = deps.ages.oldestSeconds(deps, now);
      return {
        testMode: deps.testMode,
        link: {
          connected: link.Connected,
          since: link.Since ? Date.parse(link.Since) : deps.startedAt.getTime(),
          lost: Number(link.ConnectionsLost) || 0,
        },
        waitingClients: { sortation: deps.dispatchers.sortation.waiting, destination: deps.dispatchers.destination.waiting },
        // Called with LateDecisionMs 0 too: the look forgets the REQUESTs no assignment came for.
        lateDecisions: settings.TestMode ? 0 : deps.decisions.late(),
        oldestAgeSeconds: { sortation: oldest.sortation, destination: oldest.destination },
        outboxOldestAgeSeconds: oldest.outbox,
        deadLetters: deps.deadLetters.deadLetterCounts(),
        storage: {
          state: storage.State,
          since: Date.parse(storage.Since),
          waitingFor: storage.WaitingFor,
          lastError: storage.LastError,
          lastFailure: storage.LastFailure && { at: Date.parse(storage.LastFailure.At), error: storage.LastFailure.Error },
        },
        freeDiskBytes: settings.Alarms.MinFreeDiskBytes > 0 ? freeBytes(folder) : null,
      };
    },
  }).start();
}
