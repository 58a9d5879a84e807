// The names our own worker threads give themselves: what `top -H` and `ps -L` show, so that an
// operator (and test/e2e/thread-priority.test.ts) can tell the writer from V8's helper threads,
// which lib/process/thread-priority.ts lowers in priority before these threads start.
import fs from 'node:fs';

export const THREAD_NAMES = { writer: 'sorter-writer', checkpointer: 'sorter-ckpt' } as const;

/** Name the calling thread (Linux, at most 15 characters); elsewhere it does nothing. */
export function nameThisThread(name: string): void {
  try {
    fs.writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or /proc not mounted: the name is only a convenience
  }
}
