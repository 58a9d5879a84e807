// Which of the writes waiting in the writer thread go into its next transaction, and whether that
// transaction is synced (docs/performance.md, "What it writes to the disk").
import { isDurable, owesSync } from './commands';
import type { StoredMessage } from './queue-rows';
import type { Command, CommitTiming } from './writer-protocol';

/**
 * How long a write that needs no sync (db/commands.ts, `durable`) may be held back (ms). Every
 * transaction writes each page it changed whole to the WAL, and the writes that need no sync
 * (a delivered message's removal and its history row, an acknowledged outbox entry) all touch
 * the tail of the same few tables: held and committed together, or with the next durable write,
 * they write each such page once instead of once per transaction. Nobody waits for them: a
 * delivered message stays claimed (never handed out again) until its removal is committed.
 * Longer holds write less (measured at 30 items/s: 34 KB an item at 30 ms, 29 at 80, 23 at
 * 500), but a kill -9 loses what is held, and each delivery lost is handed out again after the
 * restart (marked): 50 ms keeps that within the kill -9 suite's budget of repeats.
 */
export const HOLD_MS = 50;

/**
 * How many writes that need no sync may be held at once: when more come (a WCS working off a
 * backlog, after a restart or a lock, takes hundreds a second), they are committed without waiting
 * out the hold, so that a crash hands out again at most this many deliveries, not the hold's worth
 * of a burst. At a steady 30 items/s about 3 are held, so it changes nothing there.
 */
export const HOLD_MAX_WRITES = 8;

/**
 * How long a durable write waits for others to share its sync (ms): the commit window. At 30
 * items/s an item's telegrams come about 16 ms apart, each with a sync of its own without the
 * window; with it, the telegrams of a window share one sync and the pages they all change.
 * A sorter telegram waits it: its ACK comes that much later (the sorter keeps sending meanwhile,
 * up to its window), while its message is already handed out (HandOutBeforeCommit), so no
 * decision waits for it. A POST's entry goes to the sorter before its sync (DurableBySorterAck)
 * and needs none of its own when the sorter acknowledges it first; a POST synced at once takes
 * the telegrams in their window along. Under load, writes that arrive during a commit go into
 * the next one at once (pipelined group commit). So the window sets an item's syncs. Measured at
 * 30 items/s (wal-pages, medians of 3): 5 ms 15.2 KB and 1.28 syncs an item, 50 ms 9.8 and
 * 0.66, 100 ms 7.6 and 0.36; with every sync 20 ms slower at 50 items/s, 12.8, 7.3 and 6.0 KB.
 */
export const WINDOW_MS = 100;

/**
 * The commit window by default when messages are handed out only once committed
 * (HandOutBeforeCommit false): then every decision waits it.
 */
export const WINDOW_MS_COMMITTED_ONLY = 5;

/**
 * How many sorter telegrams may wait in the window at once: more go at once. The sorter keeps at
 * most `Sorter.Window` telegrams unacknowledged (64 by default), so a window that held more at
 * a high rate would stall it waiting for ACKs.
 */
export const WINDOW_MAX_WRITES = 16;

/**
 * How long a sorter telegram committed without its sync yet may wait for it before it is
 * acknowledged all the same (ms; config.json AckUnsyncedAfterMs), and how long a sync must last
 * for the disk to count as stalled (then telegrams are acknowledged as they commit). Longer than
 * an SD card's or eMMC's ordinary sync (1-50 ms, a consumer microSD's 50-75 ms), so that outside a
 * stall every telegram is acknowledged synced; short enough that the sorter's send window (16 for
 * protocol version 1) does not fill at 50 items/s (100 telegrams a second) while the commit
 * window and a stall's first 100 ms pass: docs/performance.md, "A stalled disk".
 */
export const ACK_UNSYNCED_AFTER_MS = 100;

/** The timing by default. */
export const DEFAULT_TIMING: CommitTiming = { windowMs: WINDOW_MS, holdMs: HOLD_MS };

/**
 * Whether a durable write waits the window for company. A POST does not: its WCS waits for the
 * answer before it takes the next message, so a window there is paid by every decision and, after
 * a backlog (an operator's lock), by every item of it, one client loop at a time; and a POST
 * rarely finds company within a few milliseconds (measured at 30 items/s: the same bytes and
 * syncs without it, decision p99 42 -> 28 ms; with every sync 20 ms slower at 50 items/s, 13.1 ->
 * 14.6 KB an item and decision p99 117 -> 108 ms). It goes at once, and takes along the telegrams
 * waiting in their window. (A POST's entry that goes before its sync, `owesSync`, never gets here:
 * planTransaction commits it at once, or, joining a synced commit, waits for no window anyway.)
 */
const waitsForCompany = (op: Command['op']) => op !== 'addToOutbox';

/** A command as the writer thread holds it: when it was taken from the port (performance.now()). */
export type Held = Command & { at: number };

/**
 * Durable writes that may be committed ahead of unsynced ones given before them, since they add
 * new rows (a telegram from the sorter, a POST's outbox entry) that the held writes do not touch.
 */
const overtakes = (op: Command['op']) => op === 'acceptFromPeer' || op === 'addToOutbox' || owesSync(op);

/**
 * The one case where that is not so: a REQUEST that takes the older REQUESTs of its item out of
 * the queue, while a delivery (or dead letter) of one of them is held. In order, the older one is
 * recorded as delivered; reordered, it would be recorded as superseded. Then nothing overtakes.
 */
function conflicts(c: Command, held: Command[]): boolean {
  if (c.op !== 'acceptFromPeer' || !c.args[5]) return false;
  const m = c.args[3] as { Type?: string; TrackID?: string };
  if (m.Type !== 'REQUEST') return false;
  return held.some((h) => {
    if (h.op !== 'deliver' && h.op !== 'deadLetter') return false;
    const { message } = h.args[0] as StoredMessage;
    return message.Type === 'REQUEST' && message.TrackID === m.TrackID;
  });
}

/** The next transaction: its commands in order, and whether it is synced; what stays pending. */
export interface Plan {
  batch: Held[];
  rest: Held[];
  synced: boolean;
}

/**
 * Plan the next transaction from `pending` (transactional commands, in the order given) at
 * `now`: null when everything may wait longer (then `wakeAt` says until when).
 *
 * - A POST's entry that goes to the sorter before its sync (`owesSync`) goes at once, unsynced,
 *   with the unsynced writes given before the first durable one (the durable ones wait on in
 *   their window, and their synced commit will make the entry durable too). Its WCS waits for
 *   the sorter's ACK or that sync, whichever comes first, not for this commit's sync.
 * - A durable write that must keep its place (any but a telegram or a POST, or one that
 *   conflicts) takes everything: synced, in order.
 * - Else durable writes go ahead of the unsynced ones held before them, synced, once the oldest
 *   of them has waited the window, or at once with a POST among them; the held ones go with them
 *   once the oldest has been held long enough.
 * - Else the unsynced ones alone, unsynced, once the oldest has been held long enough.
 * `now = Infinity` (closing) waits for nothing; `joining`: for a synced transaction already
 * under way (group commit), so its durable writes wait for no window, and a POST's entry that
 * would go unsynced goes with them, synced.
 */
export function planTransaction(pending: Held[], now: number, joining = false, timing: CommitTiming = DEFAULT_TIMING): Plan | null {
  if (pending.length === 0) return null;
  if (!joining && pending.some((c) => owesSync(c.op))) {
    const firstDurable = pending.findIndex((c) => isDurable(c.op));
    const goes = (c: Held, i: number) => owesSync(c.op) || (!isDurable(c.op) && (firstDurable < 0 || i < firstDurable));
    return { batch: pending.filter(goes), rest: pending.filter((c, i) => !goes(c, i)), synced: false };
  }
  const syncedNow = (op: Command['op']) => isDurable(op) || (joining && owesSync(op));
  const durable = pending.filter((c) => syncedNow(c.op));
  const unsynced = pending.filter((c) => !syncedNow(c.op));
  const [firstUnsynced] = unsynced;
  const [firstDurable] = durable;
  const heldLongEnough = unsynced.length >= HOLD_MAX_WRITES || (firstUnsynced !== undefined && now - firstUnsynced.at >= timing.holdMs);
  if (firstDurable === undefined) return heldLongEnough ? { batch: pending, rest: [], synced: false } : null;
  if (
    !joining &&
    durable.every((c) => waitsForCompany(c.op)) &&
    durable.length < (timing.maxWrites ?? WINDOW_MAX_WRITES) &&
    now - firstDurable.at < timing.windowMs
  )
    return null;
  if (heldLongEnough || durable.some((c) => !overtakes(c.op) || conflicts(c, unsynced))) {
    return { batch: pending, rest: [], synced: true };
  }
  return { batch: durable, rest: unsynced, synced: true };
}

/** When planTransaction will say yes without anything new arriving: a durable write's window decides, else the hold. */
export function wakeAt(pending: Held[], timing: CommitTiming = DEFAULT_TIMING): number {
  const unsyncedPost = pending.find((c) => owesSync(c.op));
  if (unsyncedPost) return unsyncedPost.at;
  const durable = pending.find((c) => isDurable(c.op));
  if (durable) return pending.some((c) => isDurable(c.op) && !waitsForCompany(c.op)) ? durable.at : durable.at + timing.windowMs;
  const unsynced = pending.find((c) => !isDurable(c.op));
  return unsynced ? unsynced.at + timing.holdMs : Infinity;
}
