// Long polling per queue: FIFO waiters, in-memory claims, and removal once a delivery is proven;
// the head a client takes: the messages handed out before their commit (UncommittedMessages)
// and the table's head query spared while the table holds nothing a client may take
// (EmptyTableMemo).
import type { DeadLetterInfo } from '../../db/dead-letter-store';
import type { QueueReads } from '../../db/queue-reads';
import type { StoredMessage } from '../../db/queue-rows';
import type { Delivery } from '../../db/queue-writes';
import type { QueueMessages, QueueName } from '../../model/messages';
import { merged } from '../host/merged';

/**
 * A message handed to one client and not yet known to be read. It stays in its table
 * (invisible to other clients) until `commit` removes it, or `release` gives it back.
 * Claims live only in memory: after a crash, every row is visible again, so a message that
 * was being handed out is delivered again rather than lost (at-least-once).
 */
export interface Claim<Q extends QueueName = QueueName> {
  readonly stored: StoredMessage<Q>;
  /** Which delivery of this message this is: 1, or more if an earlier response may have been read. */
  readonly attempt: number;
  /** Its whole response has been written (counts a redelivery when attempt > 1). */
  written(): void;
  /** The client has read it: remove the message, record the delivery. */
  commit(delivery: Omit<Delivery, 'attempt'>): Promise<boolean>;
  /**
   * Back to the head of its queue. `mayHaveBeenRead`: the response went out and nothing proves
   * it unread, so its next delivery may be a duplicate (and carries the next attempt number);
   * `from` says who had it and how the delivery ended. After MaxDeliveries such deliveries the
   * message goes to the dead letters instead.
   */
  release(mayHaveBeenRead?: boolean, from?: Unproven): void;
}

/** Who had a message whose delivery ended without proof, and how it ended (NoProof, Reset). */
export interface Unproven {
  clientAddress: string | null;
  reason: string;
}

/**
 * Tells when a waiting client has gone: called with a listener, it calls it when the client's
 * connection closes (at once if it has), and returns a function that stops listening.
 */
export type GoneWatch = (onGone: () => void) => () => void;

interface Waiter<Q extends QueueName> {
  resolve(claim: Claim<Q> | null): void;
  timer?: NodeJS.Timeout;
  unwatch?: () => void;
  settled: boolean;
}

/**
 * What the dispatcher needs of the queue store: its head, the removal of a delivered message and
 * the move of one to the dead letters (each committed when it resolves).
 */
export interface DispatchStore {
  head: QueueReads['head'];
  deliver(stored: StoredMessage, delivery: Delivery): boolean | Promise<boolean>;
  deadLetter?(stored: StoredMessage, info: DeadLetterInfo): boolean | Promise<boolean>;
  /** Rows may have come into the queue's table that the store has not been told of: read it again. */
  changed?(queue: QueueName): void;
}

/** Options of a dispatcher; every one has a default. */
export interface DispatcherOptions<Q extends QueueName> {
  /** A removal failed (it is tried again), or a move to the dead letters failed (the message stays queued). */
  onStoreError?: (err: unknown, stored: StoredMessage<Q>) => void;
  /** The first wait before a failed removal is tried again (ms); it doubles up to 30 s. Default 500. */
  retryMs?: number;
  /** Deliveries without proof of the read after which a message goes to the dead letters; 0 = never. Default 0. */
  maxDeliveries?: number;
  /** A message went to the dead letters. */
  onDeadLetter?: (stored: StoredMessage<Q>, info: DeadLetterInfo) => void;
  /** A client started waiting (the change watcher looks for other processes' rows only while one does). */
  onWaiting?: () => void;
  clock?: () => Date;
}

/**
 * Long-poll dispatch for one queue. Waiters are served strictly first come, first served;
 * `notify` is called whenever rows may have been committed (our own enqueue, a released
 * claim, or another process's commit seen by the change watcher).
 */
export class QueueDispatcher<Q extends QueueName> {
  private readonly waiters: Waiter<Q>[] = [];
  private readonly claimed = new Set<number>();
  /** Messages still queued that a client may have read (id -> attempts so): their next delivery may be a duplicate. */
  private readonly mayHaveBeenRead = new Map<number, number>();
  /** Messages sent back from the dead letters (id -> their attempts then): MaxDeliveries counts anew from there. */
  private readonly requeuedAt = new Map<number, number>();
  private closed = false;
  private readonly options: Required<DispatcherOptions<Q>>;
  /** Responses written for a message that a client may have read before: possible duplicates. */
  redelivered = 0;
  /** Messages moved to the dead letters since start. */
  deadLettered = 0;

  constructor(
    readonly queue: Q,
    private readonly store: DispatchStore,
    options: DispatcherOptions<Q> = {},
  ) {
    this.options = {
      onStoreError: () => {},
      retryMs: 500,
      maxDeliveries: 0,
      onDeadLetter: () => {},
      onWaiting: () => {},
      clock: () => new Date(),
      ...options,
    };
  }

  /** Clients currently waiting. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Messages handed out whose responses are still being written. */
  get inFlight(): number {
    return this.claimed.size;
  }

  /**
   * The ids of the messages handed out. A message stays here until its removal's commit has been
   * reported back, a moment after the table stopped holding it: count against the table with
   * QueueReads.counts, not by subtracting.
   */
  get claimedIds(): ReadonlySet<number> {
    return this.claimed;
  }

  /**
   * Take the next message, waiting up to `timeoutMs` for one. Resolves null on timeout, when
   * `gone` says the client left, and at shutdown.
   */
  take(timeoutMs: number, gone?: GoneWatch): Promise<Claim<Q> | null> {
    if (this.closed) return Promise.resolve(null);
    // Only when nobody is ahead may a newcomer take a message directly: FIFO among waiters.
    if (this.waiters.length === 0) {
      const claim = this.claimHead();
      if (claim || timeoutMs <= 0) return Promise.resolve(claim);
    } else if (timeoutMs <= 0) {
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      const waiter: Waiter<Q> = { resolve, settled: false };
      this.waiters.push(waiter);
      waiter.timer = setTimeout(() => this.drop(waiter), timeoutMs);
      if (gone) waiter.unwatch = gone(() => this.drop(waiter));
      this.options.onWaiting();
    });
  }

  /**
   * Rows may have arrived: hand them to waiters in the order they started waiting.
   * `tableChanged` false: only a message whose commit is under way arrived (the store knows of it).
   */
  notify(tableChanged = true): void {
    if (tableChanged) this.store.changed?.(this.queue);
    while (this.waiters.length > 0) {
      const claim = this.claimHead();
      if (!claim) return;
      const waiter = this.waiters.shift();
      if (!waiter) throw new Error('dispatcher: a message claimed for a waiter that is gone'); // the loop's condition says there is one
      this.settle(waiter, claim);
    }
  }

  /**
   * A dead letter is back in the queue under its old id, after `attempts` unproven deliveries:
   * its next delivery is marked as a possible duplicate, and MaxDeliveries counts anew.
   */
  requeued(id: number, attempts: number): void {
    this.mayHaveBeenRead.set(id, attempts);
    this.requeuedAt.set(id, attempts);
    this.notify();
  }

  /**
   * A message that may have reached a client before this one was queued (the sorter sent its
   * telegram again after a crash before the commit): its first delivery is marked as a possible
   * duplicate (attempt 2).
   */
  mayBeRepeat(id: number): void {
    if (!this.mayHaveBeenRead.has(id)) this.mayHaveBeenRead.set(id, 1);
  }

  /** Shutdown: answer every waiter at once (204) and accept no new ones. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) this.settle(waiter, null);
  }

  private claimHead(): Claim<Q> | null {
    const stored = this.store.head(this.queue, this.claimed);
    if (!stored) return null;
    this.claimed.add(stored.id);
    const attempt = (this.mayHaveBeenRead.get(stored.id) ?? 0) + 1;
    let done = false;
    return {
      stored,
      attempt,
      written: () => {
        if (attempt > 1) this.redelivered += 1;
      },
      commit: async (delivery) => {
        if (done) return false;
        done = true;
        // Claimed (invisible to others) until the removal is committed. If the storage fails,
        // the message stays claimed and the removal is tried again: the client has it already,
        // and handing it out again meanwhile would only repeat it. Given up only at shutdown
        // (the row stays, so it is delivered again after the restart: at-least-once).
        for (let tries = 0; ; tries++) {
          try {
            const removed = await this.store.deliver(stored, merged(delivery, { attempt }));
            this.claimed.delete(stored.id);
            this.forget(stored.id);
            return removed;
          } catch (err) {
            this.options.onStoreError(err, stored);
            if (!this.closed) await new Promise((r) => setTimeout(r, Math.min(30_000, this.options.retryMs * 2 ** tries)).unref());
            if (this.closed) {
              this.claimed.delete(stored.id);
              return false;
            }
          }
        }
      },
      release: (mayHaveBeenRead = false, from) => {
        if (done) return;
        done = true;
        if (mayHaveBeenRead) {
          this.mayHaveBeenRead.set(stored.id, attempt);
          const max = this.options.maxDeliveries;
          if (max > 0 && this.store.deadLetter && attempt - (this.requeuedAt.get(stored.id) ?? 0) >= max) {
            void this.deadLetter(stored, attempt, from);
            return;
          }
        }
        this.claimed.delete(stored.id);
        this.notify();
      },
    };
  }

  /**
   * Out of the queue into the dead letters, claimed (invisible) until that is committed. If the
   * storage fails, the message goes back to the queue: the next unproven delivery tries again.
   */
  private async deadLetter(stored: StoredMessage<Q>, attempts: number, from: Unproven | undefined): Promise<void> {
    const info: DeadLetterInfo = {
      attempts,
      clientAddress: from?.clientAddress ?? null,
      lastReturn: from?.reason ?? 'NoProof',
      deadAt: this.options.clock().toISOString(),
    };
    try {
      if (await this.store.deadLetter?.(stored, info)) {
        // called only where the store has it
        this.forget(stored.id);
        this.deadLettered += 1;
        this.options.onDeadLetter(stored, info);
      }
    } catch (err) {
      this.options.onStoreError(err, stored);
    }
    this.claimed.delete(stored.id);
    this.notify();
  }

  private forget(id: number): void {
    this.mayHaveBeenRead.delete(id);
    this.requeuedAt.delete(id);
  }

  private drop(waiter: Waiter<Q>): void {
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
    this.settle(waiter, null);
  }

  private settle(waiter: Waiter<Q>, claim: Claim<Q> | null): void {
    if (waiter.settled) return;
    waiter.settled = true;
    if (waiter.timer) clearTimeout(waiter.timer);
    waiter.unwatch?.();
    waiter.resolve(claim);
  }
}

// Messages from the sorter handed out before their commit (HandOutBeforeCommit): a waiting WCS
// gets a REQUEST as soon as its telegram arrives, while the writer thread keeps it in its commit
// window to share a disk sync with others (docs/queue-semantics.md, "Handed out before the commit").
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

// Spares a queue table's head query while the table is known to hold nothing a client may take.
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
