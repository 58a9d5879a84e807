import type { Delivery, QueueStore, StoredMessage } from '../db/queue-store';
import type { QueueName } from './messages';

/**
 * A message handed to one waiting client but not yet written to its connection. It stays in
 * its table (invisible to other clients) until `commit` removes it, or `release` gives it
 * back. Claims live only in memory: after a crash, every row is visible again, so a message
 * that was being handed out is delivered again rather than lost (at-least-once).
 */
export interface Claim<Q extends QueueName = QueueName> {
  readonly stored: StoredMessage<Q>;
  /** The response reached the client's connection: remove the message, record the delivery. */
  commit(delivery: Delivery): Promise<boolean>;
  /** The client went away first: the message goes back to the head of its queue. */
  release(): void;
}

interface Waiter<Q extends QueueName> {
  resolve(claim: Claim<Q> | null): void;
  timer?: NodeJS.Timeout;
  onAbort?: () => void;
  signal?: AbortSignal;
}

/**
 * Long-poll dispatch for one queue. Waiters are served strictly first come, first served;
 * `notify` is called whenever rows may have been committed (our own enqueue, a released
 * claim, or another process's commit seen by the change watcher).
 */
export class QueueDispatcher<Q extends QueueName> {
  private readonly waiters: Waiter<Q>[] = [];
  private readonly claimed = new Set<number>();
  private closed = false;

  constructor(
    readonly queue: Q,
    private readonly store: QueueStore,
    private readonly onCommitError: (err: unknown, stored: StoredMessage<Q>) => void = () => {},
    /** Runs a write durably (group commit in the service); resolves once committed. */
    private readonly write: <T>(fn: () => T) => Promise<T> = async (fn) => fn(),
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
   * Take the next message, waiting up to `timeoutMs` for one. Resolves null on timeout, on
   * abort (the client disconnected) and at shutdown.
   */
  take(timeoutMs: number, signal?: AbortSignal): Promise<Claim<Q> | null> {
    if (this.closed || signal?.aborted) return Promise.resolve(null);
    // Only when nobody is ahead may a newcomer take a message directly: FIFO among waiters.
    if (this.waiters.length === 0) {
      const claim = this.claimHead();
      if (claim || timeoutMs <= 0) return Promise.resolve(claim);
    } else if (timeoutMs <= 0) {
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      const waiter: Waiter<Q> = { resolve, signal };
      waiter.timer = setTimeout(() => this.drop(waiter), timeoutMs);
      if (signal) {
        waiter.onAbort = () => this.drop(waiter);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
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
    let done = false;
    return {
      stored,
      commit: async (delivery) => {
        if (done) return false;
        done = true;
        try {
          // Claimed (invisible to others) until the removal is committed.
          const removed = await this.write(() => this.store.remove(stored, delivery));
          this.claimed.delete(stored.id);
          return removed;
        } catch (err) {
          // The row stays; the client has it already, so it may be delivered twice. It is
          // visible again: hand it to whoever waits. (After a removal nothing new is visible.)
          this.onCommitError(err, stored);
          this.claimed.delete(stored.id);
          if (this.waiters.length > 0) this.notify();
          return false;
        }
      },
      release: () => {
        if (done) return;
        done = true;
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
    if (waiter.timer) clearTimeout(waiter.timer);
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(claim);
  }
}
