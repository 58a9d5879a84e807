// The commands on their way to the writer thread and back: batched per turn of the event loop,
// cancelled if not started in time, answered after their commit.
import type { WriteArgs, WriteOp, WriteResult } from './commands';
import { type Command, type FromWriter, Cancel } from './writer-protocol';

/** Per command: give up if the writer has not started it within this long. */
export interface RunOptions {
  cancelAfterMs?: number;
}

/** The writer gave up on a command before starting it: nothing of it was written. */
export class WriteCancelled extends Error {
  constructor(readonly op: string, readonly afterMs: number) {
    super(`${op} not written: the storage did not start it within ${afterMs} ms`);
    this.name = 'WriteCancelled';
  }
}

/** A write that failed in the database (its own error, or its transaction's). */
export class WriteFailed extends Error {
  constructor(readonly op: string, reason: string) {
    super(`${op} failed: ${reason}`);
    this.name = 'WriteFailed';
  }
}

/** A command's answer in a `done` message: its result, or why it failed. */
export type CommandResult = Extract<FromWriter, { type: 'done' }>['results'][number];

interface Waiting {
  op: WriteOp;
  /** performance.now() when run() was called. */
  at: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

/** How many committed commands are resolved before the event loop gets a turn (WriteQueue.settle). */
const SETTLE_CHUNK = 32;

/**
 * The main thread's side of the commands: those given in one turn of the event loop go to the
 * writer together (`post`), and each waits for its answer. `onCommit` is told of each committed
 * transaction: its writes, and how long each waited for its answer (ms).
 */
export class WriteQueue {
  private readonly waiting = new Map<number, Waiting>();
  private outgoing: Command[] = [];
  private flushScheduled = false;
  private seq = 0;

  constructor(
    private readonly post: (batch: Command[]) => void,
    private readonly onCommit?: (writes: number, waitedMs: number[]) => void,
  ) {}

  /** Commands given and not yet answered. */
  get pending(): number {
    return this.waiting.size;
  }

  /**
   * Queue a command; resolves with its result once its transaction is committed. With
   * `cancelAfterMs`, rejects with WriteCancelled if the writer has not started it by then
   * (it then never will); a command already started is waited for.
   */
  run<Op extends WriteOp>(op: Op, args: WriteArgs<Op>, options: RunOptions = {}): Promise<WriteResult<Op>> {
    const seq = ++this.seq;
    const command: Command = { seq, op, args };
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { op, at: performance.now(), resolve: resolve as (v: unknown) => void, reject };
      if (options.cancelAfterMs !== undefined) {
        command.cancel = new SharedArrayBuffer(4);
        const flag = new Int32Array(command.cancel);
        waiting.timer = setTimeout(() => {
          if (Atomics.compareExchange(flag, 0, Cancel.Queued, Cancel.Cancelled) !== Cancel.Queued) return; // started: wait for it
          this.waiting.delete(seq);
          reject(new WriteCancelled(op, options.cancelAfterMs!));
        }, options.cancelAfterMs);
      }
      this.waiting.set(seq, waiting);
      this.outgoing.push(command);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Hand what was given so far to the writer now. */
  flush(): void {
    this.flushScheduled = false;
    if (this.outgoing.length === 0) return;
    const batch = this.outgoing;
    this.outgoing = [];
    this.post(batch);
  }

  /** Answer the commands of one transaction; `committed` false: it failed as a whole. */
  settle(results: CommandResult[], committed: boolean): void {
    this.settleFrom(results, 0, performance.now(), [], committed);
  }

  /** The writer is gone: every command still waiting fails with `why`. */
  failAll(why: string): void {
    for (const [, w] of this.waiting) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(new WriteFailed(w.op, why));
    }
    this.waiting.clear();
  }

  /**
   * Resolve the commands of one commit, SETTLE_CHUNK at a time: the backlog of a long lock (500
   * commands at 50 items/s for 10 s) settles in slices with the event loop's I/O in between, so a
   * /status, a telegram or a GET is not kept waiting behind the whole backlog's continuations.
   */
  private settleFrom(results: CommandResult[], from: number, now: number, waited: number[], committed: boolean): void {
    const to = Math.min(results.length, from + SETTLE_CHUNK);
    for (let i = from; i < to; i++) {
      const [seq, ok, value] = results[i];
      const w = this.waiting.get(seq);
      if (!w) continue;
      this.waiting.delete(seq);
      if (w.timer) clearTimeout(w.timer);
      waited.push(now - w.at);
      if (ok) w.resolve(value);
      else w.reject(new WriteFailed(w.op, value as string));
    }
    if (to < results.length) {
      setImmediate(() => this.settleFrom(results, to, now, waited, committed));
      return;
    }
    if (committed && results.length > 0) this.onCommit?.(results.length, waited);
  }
}
