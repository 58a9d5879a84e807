// Messages from the sorter handed out before their commit (HandOutBeforeCommit): a waiting WCS
// gets a REQUEST as soon as its telegram arrives, while the writer thread keeps it in its commit
// window to share a disk sync with others (docs/queue-semantics.md, "Handed out before the commit").
import type { StoredMessage } from '../../db/queue-rows';
import type { QueueName, QueueMessages } from '../../model/messages';
import type { DispatchStore } from './dispatcher';
import { EmptyTableMemo } from './empty-table-memo';

/**
 * The messages whose telegram arrived and whose commit is under way, per queue, in arrival order,
 * with the ids their rows will have. The sorter gets its ACK only after the commit, as before: a
 * crash before it means the sorter sends the telegram again, and the WCS gets it a second time
 * (the one repeat this allows; without it, the WCS would wait out the commit window for every
 * message). A message whose commit failed is refused to the sorter (NAK 04), which sends it again.
 */
export class UncommittedMessages {
  private readonly waiting: { [Q in QueueName]: StoredMessage<Q>[] } = { sortation: [], destination: [] };
  /**
   * The last id given out here, per queue (ids given before their rows exist must not be given
   * twice): null until the first id, which reads the table; read again only after a commit
   * failed (one query then, not one a telegram).
   */
  private readonly lastGiven: Record<QueueName, number | null> = { sortation: null, destination: null };

  constructor(
    /** The highest id the queue's table has given (QueueReads.lastId): rows other writers added count too. */
    private readonly lastStored: (queue: QueueName) => number,
    /** When the tables are known to hold nothing but claimed rows (the head query is spared then). */
    private readonly tables = new EmptyTableMemo(0),
  ) {}

  /**
   * The id of a message from the sorter, given before its commit, whether it is handed out early
   * or not: every new row of a queue gets its id here while the service runs, so that an id given
   * to a message still waiting for its commit is never given again by the writer.
   */
  nextId(queue: QueueName): number {
    const id = (this.lastGiven[queue] ?? this.lastStored(queue)) + 1;
    this.lastGiven[queue] = id;
    return id;
  }

  /**
   * A commit under an id given here failed: the next id is one above the table's highest and the
   * last given, read again (if anything else added rows meanwhile, its ids are not given again).
   */
  refused(queue: QueueName): void {
    this.lastGiven[queue] = Math.max(this.lastGiven[queue] ?? 0, this.lastStored(queue));
  }

  /** A message whose commit starts now, under its id (nextId): it can be handed out until the commit ends. */
  add<Q extends QueueName>(queue: Q, message: QueueMessages[Q], receivedAt: string, id: number): StoredMessage<Q> {
    const stored: StoredMessage<Q> = { id, queue, message, receivedAt };
    this.waiting[queue].push(stored);
    return stored;
  }

  /**
   * Its commit ended, committed (its row is in the table now: the table's head finds it) or
   * refused (it was never stored: a delivery of it removes nothing; the sorter sends it again).
   * Found by id. (Its removal from the queue, if committed first, took it off already: `over`.)
   */
  settled(stored: StoredMessage): void {
    // Its row may be in the table now, unless its removal came first (then it has left both).
    if (this.forget(stored)) this.tables.added(stored.queue, stored.id);
  }

  /** Off the list; false if it was not on it. */
  private forget(stored: StoredMessage): boolean {
    const list: StoredMessage[] = this.waiting[stored.queue];
    const i = list.findIndex((m) => m.id === stored.id);
    if (i >= 0) list.splice(i, 1);
    return i >= 0;
  }

  /** The oldest message of a queue whose commit is under way and whose id is not in `skip`. */
  head<Q extends QueueName>(queue: Q, skip: Iterable<number>): StoredMessage<Q> | undefined {
    const list = this.waiting[queue];
    if (list.length === 0) return undefined;
    const set = asSet(skip);
    return list.find((m) => !set.has(m.id));
  }

  /** Of the messages whose commit is under way, how many are handed out (in `claimed`) and how many are not. */
  counts(queue: QueueName, claimed: ReadonlySet<number>): { waiting: number; handedOut: number } {
    const handedOut = this.waiting[queue].filter((m) => claimed.has(m.id)).length;
    return { waiting: this.waiting[queue].length - handedOut, handedOut };
  }

  /**
   * The dispatchers' store: the table's head or the oldest uncommitted message, whichever has the
   * lower id (a dead letter sent back keeps its old id and so its place ahead of them). The table
   * is not read while it is known to hold only claimed rows (EmptyTableMemo).
   */
  over(durable: DispatchStore): DispatchStore {
    const deadLetter = durable.deadLetter;
    return {
      ...durable,
      head: <Q extends QueueName>(queue: Q, skip: Iterable<number>) => {
        const claimed = asSet(skip);
        const stored = this.tables.head(queue, claimed, () => durable.head(queue, claimed));
        const pending = this.head(queue, claimed);
        return stored && pending ? (pending.id < stored.id ? pending : stored) : (stored ?? pending);
      },
      // A message's removal is committed after its own commit (the writer keeps the order of
      // writes), often in the same transaction: its answer may be handled before the one that
      // settles the message here. The dispatcher then no longer claims it, so it leaves this list
      // now; else it would be handed out a second time from here.
      deliver: async (stored, delivery) => {
        const removed = await durable.deliver(stored, delivery);
        this.left(stored);
        return removed;
      },
      ...(deadLetter && {
        deadLetter: async (stored: StoredMessage, info: Parameters<typeof deadLetter>[1]) => {
          const moved = await deadLetter(stored, info);
          if (moved) this.left(stored);
          return moved;
        },
      }),
      changed: (queue) => this.tables.changed(queue),
    };
  }

  /** Its removal from the queue (or its move to the dead letters) is committed: off this list, out of the table. */
  private left(stored: StoredMessage): void {
    this.forget(stored);
    this.tables.removed(stored.queue, stored.id);
  }
}

/** The ids as a set (the dispatcher passes its set of claims as it is). */
const asSet = (ids: Iterable<number>): ReadonlySet<number> => (ids instanceof Set ? ids : new Set(ids));
