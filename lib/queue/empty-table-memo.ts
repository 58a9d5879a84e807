// Spares a queue table's head query while the table is known to hold nothing a client may take.
import type { QueueName } from '../../model/messages';

interface Known {
  /** Every id that may be in the table since it was last read: while all are claimed, it has no head. */
  ids: Set<number>;
  at: number;
}

/**
 * What a queue table's head query would answer while nothing new can have come in: once a read
 * finds no row beyond the claimed ids, the table holds at most those ids and the ones committed
 * since (`added`), less the ones removed since (`removed`); while every one of them is claimed, the
 * table has no head for a client, and the query is not run. In steady traffic that is nearly every
 * take: the rows in the table are the messages handed out before their commit, waiting for their
 * removal. Whatever else may add rows (a dead letter sent back, a commit without hand-out before
 * it, another process's commit seen by the change watcher) calls `changed`, and the knowledge also
 * ages out after `maxAgeMs`: another process's row is seen within that even by a GET that does
 * not wait (the change watcher's interval, ExternalChangePollMs).
 */
export class EmptyTableMemo {
  private readonly known: Record<QueueName, Known | null> = { sortation: null, destination: null };

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The table's head beyond the ids in `skip`: none if the table is known to hold only those, else `read()`. */
  head<T>(queue: QueueName, skip: ReadonlySet<number>, read: () => T | undefined): T | undefined {
    const known = this.known[queue];
    if (known && this.now() - known.at < this.maxAgeMs && allIn(known.ids, skip)) return undefined;
    const found = read();
    this.known[queue] = found === undefined ? { ids: new Set(skip), at: this.now() } : null;
    return found;
  }

  /** A row with this id may be in the table now (its commit has ended). */
  added(queue: QueueName, id: number): void {
    this.known[queue]?.ids.add(id);
  }

  /** The row with this id has left the table (its removal is committed). */
  removed(queue: QueueName, id: number): void {
    this.known[queue]?.ids.delete(id);
  }

  /** Rows may have come in that were not `added` here: the next head reads the table. */
  changed(queue: QueueName): void {
    this.known[queue] = null;
  }
}

function allIn(ids: ReadonlySet<number>, skip: ReadonlySet<number>): boolean {
  for (const id of ids) if (!skip.has(id)) return false;
  return true;
}
