// The benchmark's processes: starting children (emulator, service, baseline), reading their
// resident memory and CPU time, and an operator's write lock held from the sqlite3 tool.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { THREAD_NAMES } from '../lib/host/thread-name';
import { endChildrenWithThisProcess, tracked } from '../lib/process/children';
import { projectRoot } from '../lib/process/paths';
import type { CpuLimit } from './cpu-limit';
import { type SyncStall, SyncCounter } from './slow-disk';

/** What the bench runs against: the service in its durability modes, or a baseline (in memory: on node:http, or on hapi with joi). */
export type Target = 'baseline' | 'baseline-hapi' | 'service' | 'service-normal' | 'service-nogroup';
export const allTargets: Target[] = ['baseline', 'baseline-hapi', 'service', 'service-normal', 'service-nogroup'];
/** An in-memory baseline: no disk, no cgroup, protocol version 1 whatever --layout says. */
export const isBaseline = (t: Target): boolean => t === 'baseline' || t === 'baseline-hapi';
export const describeTarget: Record<Target, string> = {
  baseline: 'baseline (node:http, in memory)',
  'baseline-hapi': 'baseline on hapi + joi (in memory)',
  service: 'service, FULL + group commit (default)',
  'service-normal': 'service, NORMAL + group commit',
  'service-nogroup': 'service, FULL, no group commit',
};

export const dist = (p: string) => path.join(projectRoot, 'dist', p);
/** The middle value (the upper of the two middle ones for an even count); NaN for none. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where the service comes from (another checkout, for before/after) and whether to profile it. */
export interface TargetOptions {
  serviceRoot: string;
  cpuProfDir?: string;
  /** Settings merged into every service target's config.json (`--service-config`). */
  serviceConfig?: Record<string, unknown>;
  /** More environment for the service targets (`npm run wal-pages`: the page log). */
  env?: NodeJS.ProcessEnv;
  /** The service's syncs stall (`--sync-stall`, the stall step). */
  syncStall?: SyncStall;
  /** The cgroup the service runs in (`--service-cpu`). */
  cpuLimit?: CpuLimit;
  /** The telegram layout the service and its emulator speak (`--layout`: a shipped name or a file; v1 if absent). The baseline speaks v1. */
  layout?: string;
  /** Node's options for the service (`--service-node-args`); if absent, its launcher chooses them, as in the units. */
  nodeArgs?: readonly string[];
}

/** A started child's pid (only a child that failed to spawn has none). */
export function pidOf(proc: ChildProcess): number {
  if (proc.pid === undefined) throw new Error('the child process has no pid: it did not start');
  return proc.pid;
}

/** The service homes, their sync counters and other scratch files not yet removed: see `endWithTheBench`. */
const scratch = new Set<string>();

/** `file` (or folder) removed when the bench exits, however it ends, if it is still there. */
export const removeWithTheBench = (file: string): void => void scratch.add(file);

/**
 * However a bench command ends (finished, failed, or stopped by a signal, which then exits with 128
 * + its number), its children end with it and the service homes and sync counters (in /dev/shm)
 * it made are removed, and what `removeWithTheBench` was given. Without this a bench stopped from outside (a CI time-out,
 * `kill`) or failing mid-step left its service or baseline listening, and its home in the
 * temporary folder. Called once by each command's entry (run.ts, wal-pages.ts).
 */
export function endWithTheBench(): void {
  endChildrenWithThisProcess(() => {
    for (const file of scratch) fs.rmSync(file, { recursive: true, force: true });
  });
}

/** Start a node child running `script`; resolve when a stdout line satisfies `ready` (returning its value). */
export function start<T>(
  script: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => T | undefined,
  onLine: (l: string) => void = () => {},
): Promise<{ proc: ChildProcess; value: T }> {
  return startCommand([process.execPath, script, ...argv], env, ready, onLine, path.basename(script));
}

/** Start `command` (a program and its arguments); resolve when a stdout line satisfies `ready` (returning its value). */
export function startCommand<T>(
  command: readonly [string, ...string[]],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => T | undefined,
  onLine: (l: string) => void = () => {},
  label = path.basename(command[command.length - 1] ?? command[0]),
): Promise<{ proc: ChildProcess; value: T }> {
  const [file, ...args] = command;
  const proc = tracked(
    spawn(file, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'] as const,
    }),
  );
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code, signal) => reject(new Error(`${label} exited (${signal ?? code}): ${stderr.slice(-500)}`)));
    readline.createInterface({ input: proc.stdout }).on('line', (line) => {
      onLine(line);
      const value = ready(line);
      if (value !== undefined) resolve({ proc, value });
    });
  });
}

const urlOf = (line: string) => {
  try {
    const u = JSON.parse(line).url;
    return typeof u === 'string' ? u.replace('0.0.0.0', '127.0.0.1') : undefined;
  } catch {
    return undefined;
  }
};

/**
 * How `npm start` and the systemd units start the service: this launcher chooses Node's options
 * (V8's collector from the CPU the process may use) and replaces itself with Node. The bench runs
 * the service through it unless `--service-node-args` gives the options.
 */
export const LAUNCHER = path.join('bin', 'sorter-integration');

/** Node's options for a service checkout without the launcher (`--service-root` of an older one): what its units ran. */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=2', '--single-threaded-gc'];

/**
 * Node's options for the service from `--service-node-args` (a site weighing V8's collector on its
 * own box: docs/operations.md, "CPU and memory"): options only, checked by starting Node with
 * them and `--version`. An empty text runs Node with none. Otherwise a sentence saying what is wrong.
 */
export function parseNodeArgs(text: string): string[] | string {
  const given = text.split(/\s+/).filter(Boolean);
  const takes = `takes Node's options for the service, space-separated (e.g. "--max-semi-space-size=2"; "" for none)`;
  const notOption = given.find((a) => !a.startsWith('-'));
  if (notOption !== undefined) return `${takes}; ${JSON.stringify(notOption)} is not an option`;
  // --version: Node checks its options and V8's, and runs nothing (a --require'd module neither).
  const r = spawnSync(process.execPath, [...given, '--version'], { encoding: 'utf8', timeout: 10_000 });
  const refusal = r.stderr.split('\n').find((l) => l.trim() !== '');
  if (r.status !== 0) return `${takes}; node refused ${JSON.stringify(text)}: ${refusal ?? `exit ${r.status ?? r.signal}`}`;
  return given;
}

/**
 * The environment the service runs with, as `npm start` and the systemd units set it (the same
 * test holds them to it). glibc's malloc gives each new thread that allocates an arena of its own,
 * up to 8 per core, and each keeps the memory it freed: 8 arenas in a running service. Two hold
 * its allocations (the writer's SQLite pages, V8's buffers) at no CPU measured, and 3 MB less
 * resident at 50 items/s (docs/operations.md, "Idle: CPU, threads and memory"). glibc reads it as
 * the process starts, so the service cannot set it for itself (test/e2e/footprint.test.ts).
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * Start a target for one run. A service target runs with the sync counter loaded (and its syncs
 * `delayMs` slower, stalling as `syncStall` says): `syncs` counts every fsync and fdatasync of the
 * process. With `cpuLimit` the service runs in that cgroup. `nodeArgs`: the options it ran with.
 */
export async function startTarget(
  target: Target,
  sorterPort: number,
  delayMs: number,
  { serviceRoot, cpuProfDir, serviceConfig, env, syncStall, cpuLimit, layout, nodeArgs }: TargetOptions,
): Promise<{ proc: ChildProcess; base: string; home?: string; syncs?: SyncCounter; nodeArgs?: string[] }> {
  if (isBaseline(target)) {
    const http = target === 'baseline-hapi' ? 'hapi' : 'node';
    const { proc, value } = await start(
      dist('bench/baseline.js'),
      ['--port', '0', '--sorter-port', String(sorterPort), '--http', http],
      {},
      urlOf,
    );
    return { proc, base: value };
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-home-'));
  scratch.add(home);
  const config = {
    TestMode: false,
    Port: 0,
    Host: '127.0.0.1',
    Synchronous: target === 'service-normal' ? 'NORMAL' : 'FULL',
    GroupCommit: target !== 'service-nogroup',
    ...serviceConfig,
    // --service-config may set Sorter keys too: merged, the link still goes to the emulator, in the emulator's layout.
    Sorter: {
      Host: '127.0.0.1',
      Port: sorterPort,
      TrafficLog: true,
      ...(serviceConfig?.Sorter as object | undefined),
      ...(layout ? { Layout: layout } : {}),
    },
  };
  fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify(config));
  const syncs = new SyncCounter(delayMs, undefined, syncStall);
  scratch.add(syncs.file);
  const { command, env: launch } = serviceCommand(serviceRoot, nodeArgs, cpuProfDir, cpuLimit);
  let ranWith: string[] | undefined;
  const { proc, value } = await startCommand(
    command,
    { ...SERVICE_ENV, SORTER_HOME: home, ...syncs.env, ...launch, ...env },
    urlOf,
    (line) => void (ranWith ??= nodeOptionsOf(line)),
  );
  return { proc, base: value, home, syncs, nodeArgs: ranWith };
}

/**
 * The command that starts a service: through its launcher as the units do (Node's options chosen
 * from the CPU it may use), or `node OPTIONS main.js` with `nodeArgs` (`--service-node-args`), or
 * with the options the units used before the launcher where `serviceRoot` has none. In the cgroup
 * of `cpuLimit` from its first instruction: the launcher reads there what it may use.
 */
function serviceCommand(
  serviceRoot: string,
  nodeArgs: readonly string[] | undefined,
  cpuProfDir: string | undefined,
  cpuLimit: CpuLimit | undefined,
): { command: [string, ...string[]]; env: NodeJS.ProcessEnv } {
  const launcher = path.join(serviceRoot, LAUNCHER);
  const profile = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(cpuProfDir)}`] : [];
  const viaLauncher = nodeArgs === undefined && fs.existsSync(launcher);
  if (viaLauncher && profile.some((a) => /\s/.test(a)))
    throw new Error(`--cpu-prof-dir: the launcher takes Node's options space-separated; ${cpuProfDir} has a space`);
  const command: [string, ...string[]] = viaLauncher
    ? ['/bin/sh', launcher]
    : [process.execPath, ...(nodeArgs ?? SERVICE_NODE_ARGS), ...profile, path.join(serviceRoot, 'dist', 'lib', 'main.js')];
  return {
    command: cpuLimit ? ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', cpuLimit.procs, ...command] : command,
    env: viaLauncher ? { NODE: process.execPath, SORTER_NODE_ARGS: profile.join(' ') } : {},
  };
}

/** Node's options from the service's start-up line that names its collector (lib/process/collector.ts). */
function nodeOptionsOf(line: string): string[] | undefined {
  if (!line.includes('"nodeOptions"')) return undefined;
  try {
    const { nodeOptions } = JSON.parse(line) as { nodeOptions?: unknown };
    return Array.isArray(nodeOptions) ? nodeOptions.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/** What startTarget started. */
export type StartedTarget = Awaited<ReturnType<typeof startTarget>>;

/** Once the target's process has ended: its home (a service's) removed and its sync counter disposed of. */
export function disposeTarget(t: StartedTarget): void {
  if (t.home) {
    fs.rmSync(t.home, { recursive: true, force: true });
    scratch.delete(t.home);
  }
  if (t.syncs) {
    t.syncs.dispose();
    scratch.delete(t.syncs.file);
  }
}

/** The figures of the emulator's EMULATOR {json} line that the bench reads (emulator/main.ts writes more). */
export interface EmulatorStats {
  inducted: number;
  sorted_as_assigned: number;
  /** The items inducted after --measure-after that were sorted as assigned (all of them without it). */
  sorted_as_assigned_measured: number;
  recirculated: number;
  rejected: number;
  late_assignments: number;
  connections: number;
  unacknowledged_at_exit: number;
  decision_p50_ms: number | null;
  decision_p99_ms: number | null;
  decision_max_ms?: number | null;
  passes_without_assignment?: number;
  /** When the last item passed its decision point without an assignment (s after the first item), null if none did. */
  last_pass_without_assignment_s?: number | null;
}

/** The sorter emulator of one run: its port, and its EMULATOR {json} figures once it has ended. */
export interface BenchEmulator {
  proc: ChildProcess;
  port: number;
  stats: Promise<EmulatorStats>;
}

/**
 * Start the emulator inducting `rate` items/s for `seconds` from the moment a host connects (a
 * second after), then waiting up to `drainTimeoutS` for what it sent to be answered; speaking
 * `layout` (a shipped layout's name or a file); with `decisionLog`, each decision sample into that
 * CSV file (the emulator's `--decision-log`).
 */
export async function startEmulator(
  rate: number,
  seconds: number,
  drainTimeoutS: number,
  measureAfterS = 0,
  layout = 'v1',
  decisionLog?: string,
): Promise<BenchEmulator> {
  let line = '';
  const emu = await start(
    dist('emulator/main.js'),
    [
      '--port',
      '0',
      '--rate',
      String(rate),
      '--seed',
      '11',
      '--duration',
      String(seconds),
      '--capacity',
      '100000000',
      '--drain-timeout',
      String(drainTimeoutS),
      '--start-when-connected',
      '1000',
      '--measure-after',
      String(measureAfterS),
      '--layout',
      layout,
      ...(decisionLog !== undefined ? ['--decision-log', decisionLog] : []),
    ],
    {},
    (l) => {
      const m = /^emulator listening on [\d.]+:(\d+)$/.exec(l);
      return m ? Number(m[1]) : undefined;
    },
    (l) => l.startsWith('EMULATOR ') && (line = l),
  );
  const stats = new Promise<EmulatorStats>((resolve, reject) =>
    emu.proc.once('exit', (code) =>
      line
        ? resolve(JSON.parse(line.slice('EMULATOR '.length)))
        : reject(new Error(`the emulator ended (${code}) without its EMULATOR line`)),
    ),
  );
  return { proc: emu.proc, port: emu.value, stats };
}

/**
 * `--service-config`: settings for the service's config.json, as a JSON object (e.g.
 * '{"CommitWindowMs":30}'); anything else is one line naming the problem, and exit 2.
 */
export function parseServiceConfig(command: string, text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return { ...value };
  } catch {
    // reported below
  }
  console.error(
    `${command}: --service-config takes a JSON object of config.json settings, e.g. '{"CommitWindowMs":30}' (--help lists the options)`,
  );
  process.exit(2);
}

/** Resident memory of a process, MB. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The threads a process has now (0 once it is gone). */
export function threadCount(pid: number): number {
  try {
    const m = /Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The name and the CPU time (user + system, ms) in a `/proc/.../stat` text: the name in parentheses may hold spaces and ")". */
function readStat(stat: string): { name: string; ms: number } {
  const end = stat.lastIndexOf(')');
  const fields = stat.slice(end + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, end), ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 }; // utime, stime in clock ticks (USER_HZ 100)
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  try {
    return readStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).ms;
  } catch {
    return Number.NaN;
  }
}

/** A process's CPU time so far by thread (ms), as docs/performance.md splits it: the main thread, the service's writer and checkpoint threads (by the names it gives them), and the rest (V8's and libuv's helpers). */
export interface ThreadCpuMs {
  main: number;
  writer: number;
  checkpoint: number;
  other: number;
}

/** A figure for each thread group. */
export const byThread = (f: (group: keyof ThreadCpuMs) => number): ThreadCpuMs => ({
  main: f('main'),
  writer: f('writer'),
  checkpoint: f('checkpoint'),
  other: f('other'),
});

/** CPU time so far by thread (`/proc/<pid>/task/<tid>/stat`); null if the process cannot be read. A thread that has ended no longer counts. */
export function threadCpuMs(pid: number): ThreadCpuMs | null {
  return sumByThread(pid, (dir) => readStat(fs.readFileSync(`${dir}/stat`, 'utf8')));
}

/**
 * The time each thread group has run so far (ms, to the microsecond: `/proc/<pid>/task/<tid>/schedstat`,
 * where `stat` counts in ticks of 10 ms, too coarse for windows of a few hundred ms); null if the
 * process cannot be read. A thread that has ended no longer counts.
 */
export function threadRunMs(pid: number): ThreadCpuMs | null {
  return sumByThread(pid, (dir) => ({
    name: fs.readFileSync(`${dir}/comm`, 'utf8').trim(),
    ms: Number(fs.readFileSync(`${dir}/schedstat`, 'utf8').split(' ')[0]) / 1e6,
  }));
}

/**
 * `read` of each of `pid`'s threads (given its /proc folder), summed by the group the thread counts
 * in: the process's main thread, the service's writer and checkpoint threads (by the names it gives
 * them), the rest. Null if the process cannot be read.
 */
function sumByThread(pid: number, read: (dir: string) => { name: string; ms: number }): ThreadCpuMs | null {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const out: ThreadCpuMs = { main: 0, writer: 0, checkpoint: 0, other: 0 };
  for (const tid of tids) {
    try {
      const { name, ms } = read(`/proc/${pid}/task/${tid}`);
      const group =
        Number(tid) === pid
          ? 'main'
          : name === THREAD_NAMES.writer
            ? 'writer'
            : name === THREAD_NAMES.checkpointer
              ? 'checkpoint'
              : 'other';
      out[group] += ms;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** The CPU each thread group spent between two readings (null if either is missing). */
export function threadCpuSince(before: ThreadCpuMs | null, after: ThreadCpuMs | null): ThreadCpuMs | null {
  return before && after ? byThread((g) => after[g] - before[g]) : null;
}

/**
 * Bytes a process has caused to be written to storage so far (`write_bytes` of /proc/<pid>/io:
 * counted when a page of the page cache turns dirty, so a 4 KB page rewritten after each fsync
 * counts each time, as the device sees it). Every thread of the process counts (the writer too).
 */
export function writeBytes(pid: number): number {
  try {
    const m = /^write_bytes:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * What the block device holding `dir` has written so far: write requests and bytes, from
 * /sys/dev/block/<major>:<minor>/stat. Unlike `writeBytes`, this includes the file system's own
 * journal (a WAL that grows makes every commit's sync also commit the journal). Every process on
 * the device counts. Null where the folder is on no block device (tmpfs, overlay).
 */
export function deviceWrites(dir: string): { ios: number; bytes: number } | null {
  try {
    const dev = fs.statSync(dir).dev;
    const major = Math.floor(dev / 256) & 0xfff;
    const minor = (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00);
    const f = fs.readFileSync(`/sys/dev/block/${major}:${minor}/stat`, 'utf8').trim().split(/\s+/).map(Number);
    const [ios, sectors] = [f[4], f[6]];
    if (ios === undefined || sectors === undefined) return null;
    return { ios, bytes: sectors * 512 }; // write I/Os, write sectors (always 512 bytes here)
  } catch {
    return null;
  }
}

/** Hold the database's write lock from an sqlite3 process, as an operator's open transaction does. */
export async function holdWriteLock(file: string, forS: number): Promise<void> {
  const sqlite = tracked(spawn('sqlite3', [file], { stdio: ['pipe', 'ignore', 'inherit'] as const }));
  sqlite.stdin.write('.timeout 5000\nBEGIN IMMEDIATE;\nSELECT 1;\n');
  await sleep(forS * 1000);
  sqlite.stdin.end('COMMIT;\n');
  await new Promise((r) => sqlite.once('exit', r));
}
