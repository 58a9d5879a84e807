// Notices rows committed by other processes (PRAGMA data_version) and wakes waiting polls.
import type { Db } from '../../db/connection';
import { dataVersionReader } from '../../db/sqlite';
import { timerAt, untilBeat } from '../host/beat';

/** Anything that can be told "rows may have changed". */
export interface Notifiable {
  readonly waiting: number;
  notify(): void;
}

/**
 * The longest wait between two looks once the database has stopped changing (ms; or
 * ExternalChangePollMs if that is longer). Looking every 100 ms for ever was most of what a
 * service with its WCS waiting and nothing to do woke up for.
 */
const EXTERNAL_CHANGE_IDLE_MS = 2000;

/** The watch: told when a client starts waiting, stopped at shutdown. */
export interface ExternalChangeWatch {
  /** A client waits now: look within `intervalMs` unless a look is already due. */
  waiting(): void;
  stop(): void;
}

/**
 * Notices rows committed by other processes (an operator's sqlite3, a second process) while
 * somebody waits. `PRAGMA data_version` changes when another connection commits: another process,
 * or our own writer thread, whose commits are already notified in-process (a notify that finds
 * nothing new costs one head query). It looks `intervalMs` after a client starts waiting and
 * after each look that found a change; each look that finds none doubles the wait, up to
 * `idleMs`. So while the service has traffic it looks every `intervalMs`, as before, and an idle
 * one looks at the clock's multiples of `idleMs` (never more than `idleMs` apart). It looks only
 * while somebody waits; the next waiter starts it again.
 */
export function watchExternalChanges(
  db: Db,
  targets: Notifiable[],
  intervalMs: number,
  idleMs = Math.max(intervalMs, EXTERNAL_CHANGE_IDLE_MS),
): ExternalChangeWatch {
  const dataVersion = dataVersionReader(db);
  let last = dataVersion();
  let wait = intervalMs;
  /** The armed look's clear (null: none armed). */
  let clear: (() => void) | null = null;
  let stopped = false;
  // At the idle pace, on the clock's multiples of it: with the alarm look and the other periodic
  // work of an idle service, one wake-up (lib/host/beat.ts).
  const arm = () => {
    const now = Date.now();
    clear = timerAt(now + (wait < idleMs ? wait : untilBeat(now, idleMs, 1)), look, Date.now, 2 * idleMs);
  };
  const look = () => {
    clear = null;
    if (!targets.some((t) => t.waiting > 0)) return;
    const now = dataVersion();
    if (now === last) wait = Math.min(wait * 2, idleMs);
    else {
      last = now;
      wait = intervalMs;
      for (const t of targets) if (t.waiting > 0) t.notify();
    }
    arm();
  };
  return {
    waiting() {
      if (clear || stopped) return;
      wait = intervalMs;
      arm();
    },
    stop() {
      stopped = true;
      clear?.();
      clear = null;
    },
  };
}
