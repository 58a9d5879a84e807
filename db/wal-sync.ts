// The writer thread's syncs of the WAL beside its commits, and the writes that wait for them
// (db/writer-thread.ts commits; this says when those commits are durable).
import fs from 'node:fs';
import { Cancel, type FromWriter, type StatusFields, Field, Phase, errorText } from './writer-protocol';

/**
 * A write committed and not yet synced that someone waits on: a durable one (its sync is due at
 * once) or one that owes a sync (db/commands.ts, `owesSync`: due once it has waited the commit
 * window, unless the main thread says it is durable another way first).
 */
export interface Owed {
  seq: number;
  flag: Int32Array | null;
  /** When its sync is due (performance.now()). */
  due: number;
  /**
   * A sorter telegram, when it may be answered without its sync (AckUnsyncedAfterMs: its commit
   * plus that long), Infinity for any other write; 0 once so answered.
   */
  earlyAt: number;
}

/** How the ledger reaches the rest of the writer thread. */
export interface WalSyncOptions {
  /** The database file: its WAL is `${file}-wal`. */
  file: string;
  /** AckUnsyncedAfterMs (null: a sorter telegram is answered only once synced): see Owed.earlyAt, and `stalled`. */
  earlyAfterMs: number | null;
  /** A sync that takes longer than this is reported (`slow-sync`, ms). */
  slowSyncMs: number;
  status: StatusFields;
  post(message: FromWriter): void;
  /** A sync beside the thread ended: what waited for it may go on (the writer's loop). */
  onSyncEnded(): void;
}

/**
 * The WAL sync ledger: the writes committed that wait for a sync (`owed`), the one sync in flight
 * beside the thread (`syncing`), and the sorter telegrams answered before their sync
 * (AckUnsyncedAfterMs). Each write is told to the main thread once durable (`synced`).
 */
export class WalSync {
  /** Made durable by the next sync of the WAL. */
  private owed: Owed[] = [];
  /** The writes the sync in flight makes durable, or null when none is in flight. */
  private syncing: Owed[] | null = null;
  /** When the sync in flight began (performance.now()). */
  private syncStartedAt = 0;
  /** The WAL's file, opened for its syncs once it exists (the first write made it; it is never deleted while the writer runs). */
  private walFd: number | null = null;

  constructor(private readonly options: WalSyncOptions) {}

  /** A sync of the WAL is in flight beside the thread. */
  get inFlight(): boolean {
    return this.syncing !== null;
  }

  /** Writes wait for the next sync. */
  get owes(): boolean {
    return this.owed.length > 0;
  }

  /** These writes committed and wait for the next sync. */
  owe(writes: Owed[]): void {
    this.owed.push(...writes);
  }

  /** Without Synchronous FULL nothing is synced, and what waited is as durable as it gets. */
  settleWithoutSync(): void {
    if (this.owed.length > 0) this.settle(this.owed.splice(0), null);
  }

  /** Writes the main thread said are durable another way (the sorter acknowledged the entry) are owed no sync. */
  forgetDurableElsewhere(): void {
    this.owed = this.owed.filter((o) => !o.flag || Atomics.load(o.flag, 0) !== Cancel.DurableElsewhere);
  }

  /** A sync is owed and may start: the oldest owed write is due (or the writer is closing) and none is in flight. */
  syncDue(now: number, closing: boolean): boolean {
    return this.owed.length > 0 && !this.syncing && (closing || this.owed.some((o) => o.due <= now));
  }

  /** When the oldest owed write is due its sync, if no sync is in flight (one in flight calls onSyncEnded as it ends). */
  owedDue(): number {
    return this.syncing || this.owed.length === 0 ? Infinity : Math.min(...this.owed.map((o) => o.due));
  }

  /**
   * The disk stalls: a sync has been in flight for AckUnsyncedAfterMs. Sorter telegrams committed
   * meanwhile are answered at once without their sync, and wait for no commit window: they would
   * only wait for the stall, while the sorter's window fills with telegrams it may not send.
   */
  stalled(now: number): boolean {
    return this.options.earlyAfterMs !== null && this.syncing !== null && now - this.syncStartedAt >= this.options.earlyAfterMs;
  }

  /**
   * Sorter telegrams committed and not yet synced that may be answered without it now
   * (AckUnsyncedAfterMs): their time came, or the disk stalls. Told to the main thread as synced,
   * counted apart; their sync, when it ends, is told again and changes nothing.
   */
  answerEarly(now: number): void {
    if (this.options.earlyAfterMs === null) return;
    const isStalled = this.stalled(now);
    const due: Owed[] = [];
    for (const list of [this.syncing ?? [], this.owed]) {
      for (const o of list) {
        if (o.earlyAt === 0 || o.earlyAt === Infinity || (o.earlyAt > now && !isStalled)) continue;
        o.earlyAt = 0;
        due.push(o);
      }
    }
    if (due.length === 0) return;
    this.options.status.add(Field.AnsweredBeforeSync, due.length);
    this.settle(due, null);
  }

  /** When answerEarly has something to do without anything new arriving. */
  earlyDue(): number {
    if (this.options.earlyAfterMs === null) return Infinity;
    const stallAt = this.syncing ? this.syncStartedAt + this.options.earlyAfterMs : Infinity;
    let next = stallAt > performance.now() ? stallAt : Infinity;
    for (const list of [this.syncing ?? [], this.owed]) for (const o of list) if (o.earlyAt > 0) next = Math.min(next, o.earlyAt);
    return next;
  }

  /**
   * Sync the WAL beside this thread (in libuv's pool), for every write committed so far: one sync at a
   * time; what commits meanwhile waits for the next, which starts as this one ends (group commit
   * again, at the disk's pace). Counted as a sync in /status.
   */
  startSync(): void {
    if (this.syncing || this.owed.length === 0) return;
    const writes = this.owed;
    this.owed = [];
    let fd: number;
    try {
      fd = this.openWal();
    } catch (err) {
      return this.settle(writes, errorText(err));
    }
    this.syncing = writes;
    const { status } = this.options;
    status.set(Field.SyncSince, status.now());
    this.syncStartedAt = performance.now();
    const earlyBefore = status.get(Field.AnsweredBeforeSync);
    fs.fdatasync(fd, (err) => {
      status.set(Field.SyncSince, 0);
      if (!err) status.add(Field.SyncedCommits, 1);
      const ms = performance.now() - this.syncStartedAt;
      if (ms >= this.options.slowSyncMs)
        this.options.post({
          type: 'slow-sync',
          ms: Math.round(ms),
          answeredEarly: Number(status.get(Field.AnsweredBeforeSync) - earlyBefore),
        });
      const done = this.syncing ?? [];
      this.syncing = null;
      this.settle(done, err ? errorText(err) : null);
      this.options.onSyncEnded();
    });
  }

  /**
   * Sync the WAL on this thread, waiting for it: at a stop, once the sync in flight (if any) ended.
   * `always`: even when no write waits for it.
   */
  syncNow(always = false): void {
    if (this.owed.length === 0 && !always) return;
    const { status } = this.options;
    status.phase(Phase.Sync);
    let failure: string | null = null;
    try {
      fs.fdatasyncSync(this.openWal());
      status.add(Field.SyncedCommits, 1);
    } catch (err) {
      failure = errorText(err);
    }
    status.phase(Phase.Idle);
    this.settle(this.owed.splice(0), failure);
  }

  /** The WAL's file is closed (the writer stops). */
  close(): void {
    if (this.walFd !== null) fs.closeSync(this.walFd);
    this.walFd = null;
  }

  private openWal(): number {
    return (this.walFd ??= fs.openSync(`${this.options.file}-wal`, 'r+'));
  }

  /** These writes are durable now (or the sync failed: `failure`). */
  private settle(done: Owed[], failure: string | null): void {
    if (done.length > 0) this.options.post({ type: 'synced', seqs: done.map((o) => o.seq), failure });
  }
}
