// A slower CPU for the benchmark (`--service-cpu PCT`): a cgroup of its own that lets the processes
// moved into it use PCT% of one core, on cgroup v2 (cpu.max) or v1 (the cpu controller's CFS quota).
import fs from 'node:fs';
import path from 'node:path';
import { errorCode, errorMessage } from '../lib/process/errors';

/** How often the kernel hands out the quota (µs): 10 ms, so that a throttled service waits milliseconds, as on a slow core, not a 100 ms slice. */
const PERIOD_US = 10_000;
/** The kernel's smallest quota (µs): below 10% the period grows to keep it. */
const MIN_QUOTA_US = 1_000;

/** The CFS periods that have passed and those in which the group used up its quota. */
export interface Throttling {
  periods: number;
  throttled: number;
}

/** What the group's counters moved between two readings (null: no group, so no readings). */
export function throttlingBetween(before: Throttling | undefined, after: Throttling | undefined): Throttling | null {
  return before && after ? { periods: after.periods - before.periods, throttled: after.throttled - before.throttled } : null;
}

/** A cgroup that limits the CPU of what is moved into it; `remove()` once they have exited. */
export interface CpuLimit {
  readonly pct: number;
  readonly dir: string;
  readonly version: 1 | 2;
  /** The group's list of processes: a pid written to it moves that process (all its threads, and those it starts later) into the group. */
  readonly procs: string;
  /** Move a process (all its threads, and those it starts later) into the group. */
  add(pid: number): void;
  /** The group's periods and throttled periods so far (cpu.stat). */
  throttling(): Throttling;
  /** Move what is left in the group back to its parent and remove the group. Safe to call twice. */
  remove(): void;
}

/** `PCT` of `--service-cpu` as a number; otherwise a sentence saying what is wrong. */
export function parseCpuPct(text: string): number | string {
  const pct = Number(text);
  if (text.trim() === '' || !Number.isFinite(pct) || pct <= 0 || pct > 100)
    return `takes the percentage of one core the service may use, a number above 0 and at most 100, e.g. 25; got ${JSON.stringify(text)}`;
  return pct;
}

/** The period and quota (µs) for `pct`% of one core. */
export function quotaOf(pct: number): { periodUs: number; quotaUs: number } {
  const periodUs = Math.max(PERIOD_US, Math.ceil((MIN_QUOTA_US * 100) / pct));
  return { periodUs, quotaUs: Math.round((periodUs * pct) / 100) };
}

const readable = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** A v2 hierarchy with the cpu controller available (/sys/fs/cgroup, or the hybrid layout's unified/), or null. */
function v2Root(): string | null {
  for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
    if (readable(path.join(root, 'cgroup.controllers'))?.split(/\s+/).includes('cpu')) return root;
  }
  return null;
}

/** A v1 hierarchy with the cpu controller's CFS quota (cpu or cpu,cpuacct), or null. */
function v1Root(): string | null {
  for (const root of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
    if (fs.existsSync(path.join(root, 'cpu.cfs_quota_us'))) return root;
  }
  return null;
}

/** The key-value lines of a cpu.stat file. */
function statOf(file: string): Record<string, number> {
  return Object.fromEntries(
    (readable(file) ?? '')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' '))
      .map(([k, v]) => [k, Number(v)]),
  );
}

/**
 * Create the group `sorter-bench-<pid>` limited to `pct`% of one core, or say in one sentence why
 * this machine does not allow it (not root, no cgroup file system, no cpu controller).
 */
export function createCpuLimit(pct: number, name = `sorter-bench-${process.pid}`): CpuLimit | string {
  if (process.platform !== 'linux') return 'cgroups are Linux only';
  if (process.getuid?.() !== 0) return 'creating a cgroup needs root';
  const v2 = v2Root();
  const root = v2 ?? v1Root();
  if (!root) return 'no cgroup file system with the cpu controller under /sys/fs/cgroup';
  const dir = path.join(root, name);
  const { periodUs, quotaUs } = quotaOf(pct);
  try {
    if (v2) {
      // A child gets the cpu controller only where its parent hands it down.
      const control = path.join(root, 'cgroup.subtree_control');
      if (!fs.readFileSync(control, 'utf8').split(/\s+/).includes('cpu')) fs.writeFileSync(control, '+cpu');
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'cpu.max'), `${quotaUs} ${periodUs}`);
    } else {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(periodUs));
      fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
    }
  } catch (err) {
    if (fs.existsSync(dir)) fs.rmdirSync(dir);
    return `cannot set up the cgroup ${dir}: ${errorMessage(err)}`;
  }
  let removed = false;
  return {
    pct,
    dir,
    version: v2 ? 2 : 1,
    procs: path.join(dir, 'cgroup.procs'),
    add: (pid) => fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid)),
    throttling() {
      const s = statOf(path.join(dir, 'cpu.stat'));
      return { periods: s.nr_periods ?? 0, throttled: s.nr_throttled ?? 0 };
    },
    remove() {
      if (removed) return;
      removed = true;
      // A group with a process in it cannot be removed: one still running goes back to the parent.
      for (const pid of (readable(path.join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean)) {
        try {
          fs.writeFileSync(path.join(root, 'cgroup.procs'), pid);
        } catch {
          // it exited meanwhile
        }
      }
      // A process that has just exited may still count for a moment (EBUSY): a few tries, 50 ms apart.
      for (let attempt = 1; ; attempt++) {
        try {
          fs.rmdirSync(dir);
          return;
        } catch (err) {
          const code = errorCode(err);
          if (code === 'ENOENT') return;
          if (code !== 'EBUSY' || attempt === 20) {
            process.stderr.write(`could not remove the cgroup ${dir}: ${errorMessage(err)}\n`);
            return;
          }
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        }
      }
    },
  };
}
