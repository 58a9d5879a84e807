// `npm run bench -- --thread-timeline DIR`: a target's CPU thread by thread in windows of 250 ms,
// from the first REQUEST its client is handed to the end of the step, as a CSV file a run. The
// step's line gives the CPU of the whole window; this shows where in it the CPU went: on a slow
// CPU, whether the first half second of traffic used the whole of a cgroup's quota (a backlog the
// first decisions wait behind) and which thread spent it.
import fs from 'node:fs';
import { type ThreadCpuMs, byThread, threadCpuSince, threadRunMs } from './processes';

/** The window: short enough to show the first half second's work, long enough for a quota's periods (10 ms) to average out. */
export const TIMELINE_WINDOW_MS = 250;

export const TIMELINE_HEADER = 'from_first_item_s,window_ms,main_ms,writer_ms,checkpoint_ms,other_ms';

/** One window: when it began (s after the first item), how long it was (ms), and the CPU each thread group spent in it (ms). */
export interface TimelineRow {
  fromS: number;
  windowMs: number;
  cpu: ThreadCpuMs;
}

/**
 * Read `pid`'s threads every `everyMs` once `begun()` is true (checked every 10 ms); `stop` ends
 * the readings, writes them to `file` (with TIMELINE_HEADER) and returns them. A target that
 * cannot be read (it ended) ends the rows.
 */
export function startThreadTimeline(
  pid: number,
  begun: () => boolean,
  file: string,
  everyMs = TIMELINE_WINDOW_MS,
): { stop(): TimelineRow[] } {
  const rows: TimelineRow[] = [];
  let first: { at: number; cpu: ThreadCpuMs } | null = null;
  let last: { at: number; cpu: ThreadCpuMs } | null = null;
  let timer: NodeJS.Timeout;
  const read = () => {
    const cpu = threadRunMs(pid);
    return cpu ? { at: performance.now(), cpu } : null;
  };
  const window = () => {
    const now = read();
    const before = last;
    const spent = threadCpuSince(before?.cpu ?? null, now?.cpu ?? null);
    if (!now || !before || !spent || !first) return;
    rows.push({
      fromS: Math.round(before.at - first.at) / 1000,
      windowMs: Math.round((now.at - before.at) * 10) / 10,
      cpu: byThread((g) => Math.round(spent[g] * 10) / 10),
    });
    last = now;
  };
  const wait = () => {
    if (!begun()) {
      timer = setTimeout(wait, 10);
      return;
    }
    first = last = read();
    timer = setInterval(window, everyMs);
  };
  wait();
  return {
    stop() {
      clearTimeout(timer);
      clearInterval(timer);
      const lines = rows.map((r) => [r.fromS, r.windowMs, r.cpu.main, r.cpu.writer, r.cpu.checkpoint, r.cpu.other].join(','));
      fs.writeFileSync(file, [TIMELINE_HEADER, ...lines].join('\n') + '\n');
      return rows;
    },
  };
}
