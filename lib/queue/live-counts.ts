// The queue and outbox figures of GET /status, a /metrics scrape and the dashboard's sample,
// counted without holding the main thread. A table whose ids span no more than a slice is counted
// whole, in one statement, as it always was. A longer one (a WCS away for an hour leaves 180,000
// VERIFYs at 50 items/s) is counted a slice at a time, each slice its own statement, with the
// event loop free between slices: the sorter's telegrams and the WCS's polls go on while the count
// goes on. Callers that ask while a count of the same table is under way share it, so a client
// polling /status in a loop starts no second count beside the first.
import { type CountSlice, type Counted, SLICE_ROWS, type TableCount, nextTurn } from '../../db/table-count';
import type { QueueName } from '../../model/messages';

/** What waits in a queue, split by the claims being handed out. */
export interface QueueFigures {
  waiting: number;
  handedOut: number;
}

/** The live figures. */
export interface LiveCounts {
  /** A queue's messages: those being handed out (claimed) apart from those waiting. */
  queue(queue: QueueName): Promise<QueueFigures>;
  /** The outbox's entries. */
  outbox(): Promise<number>;
  /** Both queues and the outbox, as GET /status and the metrics read them. */
  figures(): Promise<{ sortation: QueueFigures; destination: QueueFigures; outbox: number }>;
}

/** What the counts read: the tables' counting statements and the claims in flight. */
export interface LiveCountSources {
  store: { tally(queue: QueueName): TableCount };
  outbox: { tally: TableCount };
  dispatchers: { [Q in QueueName]: { readonly claimedIds: Iterable<number> } };
}

/**
 * Count `table` with the ids `among()` names: whole if its ids span at most `sliceRows`, else a
 * slice at a time. `among` is read again for each slice, so a claim settled while the count goes
 * on is counted as it stood in its own slice's snapshot: once, never both waiting and handed out.
 */
export async function countInSlices(
  table: TableCount,
  among: () => Iterable<number>,
  sliceRows = SLICE_ROWS,
  yieldTurn: () => Promise<void> = nextTurn,
): Promise<Counted> {
  const ids = () => JSON.stringify([...among()]);
  if (table.span() <= sliceRows) return table.whole(ids());
  let rows = 0;
  let amongRows = 0;
  let from = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const s: CountSlice = table.slice(ids(), from, sliceRows);
    rows += s.rows;
    amongRows += s.among;
    if (s.rows < sliceRows || s.last === null) return { rows, among: amongRows };
    from = s.last + 1;
    await yieldTurn();
  }
}

/** The live figures of the service's queues and outbox. */
export function liveCounts(sources: LiveCountSources, sliceRows = SLICE_ROWS, yieldTurn: () => Promise<void> = nextTurn): LiveCounts {
  const running = new Map<string, Promise<Counted>>();
  // One count of a table at a time; a caller asking meanwhile shares it.
  const shared = (key: string, table: TableCount, among: () => Iterable<number>): Promise<Counted> => {
    const under = running.get(key);
    if (under) return under;
    const count = countInSlices(table, among, sliceRows, yieldTurn).finally(() => running.delete(key));
    running.set(key, count);
    return count;
  };
  const none = (): Iterable<number> => [];
  const queue = async (q: QueueName): Promise<QueueFigures> => {
    const { rows, among } = await shared(q, sources.store.tally(q), () => sources.dispatchers[q].claimedIds);
    return { waiting: rows - among, handedOut: among };
  };
  const outbox = async () => (await shared('outbox', sources.outbox.tally, none)).rows;
  return {
    queue,
    outbox,
    async figures() {
      const [sortation, destination, entries] = await Promise.all([queue('sortation'), queue('destination'), outbox()]);
      return { sortation, destination, outbox: entries };
    },
  };
}
