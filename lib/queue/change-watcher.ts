// Notices rows committed by other processes (PRAGMA data_version) and wakes waiting polls.
import type { Db } from '../../db/connection';

/** Anything that can be told "rows may have changed". */
export interface Notifiable {
  readonly waiting: number;
  notify(): void;
}

/**
 * Notices rows committed by other processes (an operator's sqlite3, a second process) while
 * somebody waits. `PRAGMA data_version` changes only when another connection commits, so our
 * own writes (already notified in-process) cost nothing here. When nobody waits, it does no I/O.
 */
export function watchExternalChanges(db: Db, targets: Notifiable[], intervalMs: number): () => void {
  let last = db.pragma('data_version', { simple: true }) as number;
  const timer = setInterval(() => {
    if (!targets.some((t) => t.waiting > 0)) return;
    const now = db.pragma('data_version', { simple: true }) as number;
    if (now === last) return;
    last = now;
    for (const t of targets) if (t.waiting > 0) t.notify();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
