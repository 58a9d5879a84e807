// Test mode start-up: empty the test database and seed it from the replay file.
import path from 'node:path';
import type { QueueWrites } from '../../db/queue-writes';
import type { Logger } from '../process/logger';
import type { SorterMessage } from '../../model/messages';
import { ReplayFileError, findReplayFile, readReplayFile } from './replay';
import type { TelegramWire } from '../layout/wire';
import { errorMessage } from '../process/errors';

/** Skipped replay rows logged one by one; the rest are counted in one line. */
const LOGGED_SKIPPED_ROWS = 20;

/** What test mode loaded at start-up; shown in GET /status. */
export interface ReplaySummary {
  File: string | null;
  RowsLoaded: number;
  RowsSkipped: number;
  Error: string | null;
}

/** The queue writes seeding needs: synchronous (one connection) or through the writer thread. */
export type SeedTarget = {
  [K in 'clearQueues' | 'enqueue']: (
    ...args: Parameters<QueueWrites[K]>
  ) => ReturnType<QueueWrites[K]> | Promise<ReturnType<QueueWrites[K]>>;
};

/**
 * The replay file's messages into the queues, in file order, in batches, one committed while the
 * next is read; rows that do not parse are skipped (the first ones logged). A file that cannot be
 * read ends the load: what was committed stays, and `summary.Error` says why.
 */
async function loadRows(
  file: string,
  wire: TelegramWire | undefined,
  store: SeedTarget,
  log: Logger,
  now: () => Date,
  batchSize: number,
  summary: ReplaySummary,
): Promise<void> {
  let batch: SorterMessage[] = [];
  let committing: Promise<unknown> = Promise.resolve();
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    await committing; // at most one batch in flight: flat memory
    committing = Promise.resolve(store.enqueue(rows, now().toISOString())).then(() => (summary.RowsLoaded += rows.length));
  };
  try {
    for await (const item of readReplayFile(file, wire)) {
      if ('problem' in item) {
        summary.RowsSkipped += 1;
        // The first ones each get a line; a file full of bad rows must not flood the log.
        if (summary.RowsSkipped <= LOGGED_SKIPPED_ROWS) {
          log.warn(
            { file: summary.File, ...item.problem },
            `replay row skipped: line ${item.problem.line}, ${item.problem.column} ${JSON.stringify(item.problem.value)}: expected ${item.problem.expected}`,
          );
        }
        continue;
      }
      batch.push(item.message);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    await committing;
  } catch (err) {
    // Rows committed so far stay: they are whole, in order, and the status says what happened.
    await flush().catch(() => {});
    await committing.catch(() => {});
    summary.Error = err instanceof ReplayFileError ? err.message : `${summary.File} cannot be read: ${errorMessage(err)}`;
    log.error({ file: summary.File }, summary.Error);
  }
}

/**
 * Test mode start-up: empty the test database's queues and load exactly the replay file's
 * messages, in file order, committing in batches so a million rows stay in flat memory. One
 * batch is committed while the next is read.
 */
export async function seedFromReplay(
  home: string,
  store: SeedTarget,
  log: Logger,
  now: () => Date,
  batchSize = 5000,
  /** The layout Service_PLC.log was written in (Sorter.Layout; default: protocol version 1). */
  wire?: TelegramWire,
): Promise<ReplaySummary> {
  const file = findReplayFile(home);
  const summary: ReplaySummary = { File: file ? path.basename(file) : null, RowsLoaded: 0, RowsSkipped: 0, Error: null };
  try {
    await store.clearQueues();
  } catch (err) {
    summary.Error = `the test database cannot be emptied and seeded: ${errorMessage(err)}`;
    log.error({ file: summary.File }, summary.Error);
    return summary;
  }
  if (!file) {
    log.warn({ home }, 'test mode: no Service_PLC.csv or Service_PLC.log in the service home; queues start empty');
    return summary;
  }
  await loadRows(file, wire, store, log, now, batchSize, summary);
  if (summary.RowsSkipped > LOGGED_SKIPPED_ROWS) {
    log.warn(
      { file: summary.File, skipped: summary.RowsSkipped, logged: LOGGED_SKIPPED_ROWS },
      `replay: ${summary.RowsSkipped - LOGGED_SKIPPED_ROWS} more rows skipped, not logged one by one (the first ${LOGGED_SKIPPED_ROWS} are above)`,
    );
  }
  log.info({ ...summary }, `test mode: replayed ${summary.RowsLoaded} messages from ${summary.File} (${summary.RowsSkipped} rows skipped)`);
  return summary;
}
