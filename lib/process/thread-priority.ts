// The helper threads below the event loop and the writer in the CPU scheduler (Linux): a
// telegram's hand-out never waits behind V8 compiling code or libuv's pool writing a log.
import fs from 'node:fs';
import os from 'node:os';

/** The niceness helper threads get by default (config.json HelperThreadNice; the emulator and the bench always). */
export const HELPER_THREAD_NICE = 19;

/** What lowerHelperThreads did. */
export interface Lowered {
  /** Threads set to the niceness asked for. */
  lowered: number;
  /** Threads already at it or lower in priority (left as they were). */
  already: number;
  /** Threads that could not be changed (gone meanwhile, or not allowed). */
  failed: number;
}

/** The kernel's id of the calling thread (Linux), or null elsewhere. */
export function currentThreadId(): number | null {
  try {
    const m = /\/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Give every thread of this process that exists now, except the calling one, the niceness `nice`
 * (0 to 19; 0 changes nothing), and never a higher priority than it has. Linux schedules threads
 * one by one and setpriority(2) on a thread id sets that thread's niceness only; threads created
 * later start with their creator's. Elsewhere (no /proc/self/task) it does nothing.
 *
 * Measured (docs/performance.md, "Wake latency"): on 2 cores shared with the sorter emulator and
 * the WCS, the main thread waited up to 2 ms for a core after a telegram's bytes arrived while
 * V8's helper threads compiled optimised code in runs of several milliseconds; at nice 19 the
 * wake latency p99 at 50 items/s fell by half.
 */
export function lowerHelperThreads(nice: number): Lowered {
  const done: Lowered = { lowered: 0, already: 0, failed: 0 };
  if (nice <= 0) return done;
  const self = currentThreadId();
  let tids: number[];
  try {
    tids = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    return done;
  }
  for (const tid of tids) {
    if (tid === self) continue;
    try {
      if (os.getPriority(tid) >= nice) {
        done.already += 1;
        continue;
      }
      os.setPriority(tid, nice);
      done.lowered += 1;
    } catch {
      done.failed += 1;
    }
  }
  return done;
}

/**
 * lowerHelperThreads at a process's start, before it starts threads of its own: libuv's pool is
 * started first (its threads start with its first request), so that its threads are lowered too.
 */
export async function lowerHelperThreadsAtStart(nice: number): Promise<Lowered> {
  await fs.promises.stat('/');
  return lowerHelperThreads(nice);
}
