// Long polling per queue: FIFO waiters, in-memory claims, and removal once a delivery is proven.
import type { Delivery, QueueReads, StoredMessage } from '../db/queue-store';
import type { QueueName } from './messages';

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
   * it unread, so its next delivery may be a duplicate (and carries the next attempt number).
   */
  release(mayHaveBeenRead?: boolean): void;
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

/** What the dispatcher needs of the queue store: its head, and the removal of a delivered message (committed when it resolves). */
export interface DispatchStore {
  head: QueueReads['head'];
  remove(stored: StoredMessage, delivery: Delivery): boolean | Promise<boolean>;
}

/** The first wait before a failed removal is tried again (ms); it doubles up to 30 s. */
const REMOVAL_RETRY_MS = 500;

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
  private closed = false;
  /** Responses written for a message that a client may have read before: possible duplicates. */
  redelivered = 0;

  constructor(
    readonly queue: Q,
    private readonly store: DispatchStore,
    private readonly onCommitError: (err: unknown, stored: StoredMessage<Q>) => void = () => {},
    private readonly retryMs = REMOVAL_RETRY_MS,
  ) {}

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
    });
  }

  /** Rows may have arrived: hand them to waiters in the order they started waiting. */
  notify(): void {
    while (this.waiters.length > 0) {
      const claim = this.claimHead();
      if (!claim) return;
      const waiter = this.waiters.shift()!;
      this.settle(waiter, claim);
    }
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
            const removed = await this.store.remove(stored, { ...delivery, attempt });
            this.claimed.delete(stored.id);
            this.mayHaveBeenRead.delete(stored.id);
            return removed;
          } catch (err) {
            this.onCommitError(err, stored);
            if (!this.closed) await new Promise((r) => setTimeout(r, Math.min(30_000, this.retryMs * 2 ** tries)).unref());
            if (this.closed) {
              this.claimed.delete(stored.id);
              return false;
            }
          }
        }
      },
      release: (mayHaveBeenRead = false) => {
        if (done) return;
        done = true;
        if (mayHaveBeenRead) this.mayHaveBeenRead.set(stored.id, attempt);
        this.claimed.delete(stored.id);
        this.notify();
      },
    };
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
