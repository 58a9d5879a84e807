import path from 'node:path';
import type { QueueStore } from '../db/queue-store';
import type { Logger } from './logger';
import type { SorterMessage } from './messages';
import { ReplayFileError, findReplayFile, readReplayFile } from './replay';

/** What test mode loaded at start-up; shown in GET /status. */
export interface ReplaySummary {
  File: string | null;
  RowsLoaded: number;
  RowsSkipped: number;
  Error: string | null;
}

/**
 * Test mode start-up: empty the test database's queues and load exactly the replay file's
 * messages, in file order, committing in batches so a million rows stay in flat memory.
 */
export async function seedFromReplay(
  home: string,
  store: QueueStore,
  log: Logger,
  now: () => Date,
  batchSize = 5000,
): Promise<ReplaySummary> {
  store.clear();
  const file = findReplayFile(home);
  const summary: ReplaySummary = { File: file ? path.basename(file) : null, RowsLoaded: 0, RowsSkipped: 0, Error: null };
  if (!file) {
    log.warn({ home }, 'test mode: no Service_PLC.csv or Service_PLC.log in the service home; queues start empty');
    return summary;
  }
  let batch: SorterMessage[] = [];
  const flush = () => {
    if (batch.length === 0) return;
    store.enqueue(batch, now().toISOString());
    summary.RowsLoaded += batch.length;
    batch = [];
  };
  try {
    for await (const item of readReplayFile(file)) {
      if ('problem' in item) {
        summary.RowsSkipped += 1;
        log.warn({ file: summary.File, ...item.problem }, `replay row skipped: line ${item.problem.line}, ${item.problem.column} ${JSON.stringify(item.problem.value)}: expected ${item.problem.expected}`);
        continue;
      }
      batch.push(item.message);
      if (batch.length >= batchSize) flush();
    }
    flush();
  } catch (err) {
    // Rows committed so far stay: they are whole, in order, and the status says what happened.
    flush();
    summary.Error = err instanceof ReplayFileError ? err.message : `${summary.File} cannot be read: ${(err as Error).message}`;
    log.error({ file: summary.File }, summary.Error);
  }
  log.info({ ...summary }, `test mode: replayed ${summary.RowsLoaded} messages from ${summary.File} (${summary.RowsSkipped} rows skipped)`);
  return summary;
}
