// One step of the benchmark: the emulator at a rate, the target, the reference client; what it
// measured, and the median of several runs.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { type WcsStats, runWcsClient } from '../examples/wcs-client';
import { type CpuLimit, type Throttling, throttlingBetween } from './cpu-limit';
import type { SyncStall } from './slow-disk';
import { startThreadTimeline } from './thread-timeline';
import {
  type BenchEmulator,
  type Target,
  type TargetOptions,
  cpuMs,
  byThread,
  threadCpuMs,
  threadCpuSince,
  type ThreadCpuMs,
  describeTarget,
  deviceWrites,
  disposeTarget,
  holdWriteLock,
  isBaseline,
  median,
  pidOf,
  rssMb,
  sleep,
  startEmulator,
  startTarget,
  writeBytes,
} from './processes';

/** What every step shares: the plan's runs and client loops, the service to run, where to log. */
export interface StepContext extends TargetOptions {
  runs: number;
  clientLoops: number;
  /** Seconds of traffic before the measurements start (0: from the target's start, warm-up included). */
  warmupS?: number;
  /** A folder for each run's decision samples (`--decision-log`): NNN-TARGET-RATE.csv, NNN counting the runs from 001. */
  decisionLogDir?: string;
  /** A folder for each run's CPU thread by thread in windows of 250 ms from its first item (`--thread-timeline`): NNN-TARGET-RATE-threads.csv. */
  threadTimelineDir?: string;
  log(line: string): void;
}

export interface StepResult {
  rate: number;
  cyclesPerS: number;
  sustained: boolean;
  decisionP50: number | null;
  decisionP99: number | null;
  /** The longest decision that came in time (a late one is counted in `late`, not here). */
  decisionMax: number | null;
  wakeP50: number | null;
  wakeP99: number | null;
  /** The target's resident memory: its peak during the step, and at its end. */
  rssMb: number;
  rssEndMb: number;
  /** With StepOptions.rssEveryS: the target's resident memory (MB) at the end of each such interval, in order. */
  rssSeries?: number[];
  /**
   * With StepOptions.rssEveryS, the service only: the REQUESTs its GET /status counted late
   * (`DecisionLatency.Late`) in each such interval, in order (null: /status did not answer).
   */
  lateSeries?: Array<number | null>;
  /** The target's CPU (all its threads) as a percentage of one core over the measured time. */
  cpuPctOfCore: number;
  /** Node's options the service ran with, from its start-up line (absent: the baseline, or not said). */
  nodeArgs?: string[];
  /** The CFS periods of the step and those in which the target's cgroup was throttled (null: no `--service-cpu`). */
  throttling: Throttling | null;
  /** Sync stalls the target met during the step (null: the baseline). */
  stalls: number | null;
  /** CPU time per completed cycle: the target, the emulator, and the client (this process). */
  cpuUsPerCycle: { target: number; emulator: number; client: number };
  /** The target's CPU time per completed cycle by thread (µs; null: unreadable): where its cpuUsPerCycle.target goes. */
  cpuUsPerCycleByThread: ThreadCpuMs | null;
  /** What the target wrote to storage per completed cycle (KB): its database, WAL and logs. */
  diskKbPerCycle: number;
  /** What the device under its home wrote per completed cycle, journal included: KB and write requests (null: no block device). */
  deviceKbPerCycle: number | null;
  deviceWritesPerCycle: number | null;
  /** fsync and fdatasync calls of the target per completed cycle (null: the baseline, which syncs nothing). */
  syncsPerCycle: number | null;
  lost: number;
  duplicated: number;
  recirculated: number;
  rejected: number;
  /** Assignments that reached the sorter after their item's decision. */
  late: number;
  /** Passes that reached their decision point without an assignment (each one recirculated or rejected an item). */
  passesWithoutAssignment: number;
  /** GET /status round trips during the run, p99 (ms), and the link's reconnects. */
  statusP99Ms: number | null;
  reconnects: number;
  /** Over several runs (medianStep): each run's figures, in the order run. */
  runs?: RunFigures;
}

/**
 * Each run's figures of a step run several times, in the order run: the decision p99 (ms), the CPU
 * per cycle (µs), and the counts a run can hide in a median (late assignments, passes without
 * assignment, items rejected).
 */
export interface RunFigures {
  decisionP99: Array<number | null>;
  cpuUsPerCycle: number[];
  late: number[];
  passesWithoutAssignment: number[];
  rejected: number[];
}

/** How a step's storage is made worse: slower fsync, and an operator's write lock held for a while. */
export interface StepOptions {
  fsyncDelayMs?: number;
  lock?: { afterS: number; forS: number };
  /** Every few seconds a sync stalls (an SD card under sustained writes). */
  syncStall?: SyncStall;
  /** The target runs in this cgroup (`--service-cpu`). */
  cpuLimit?: CpuLimit;
  /** Also read the target's resident memory every this many seconds of the measured time (`--memory-minutes`). */
  rssEveryS?: number;
}

/**
 * A rate counts as sustained when its decision round trip p99 stays under a third of the
 * emulator's 1.5 s decision window (so a WCS still has most of the window for itself), nothing
 * is rejected and under 1% of items recirculate.
 */
const SUSTAINED_DECISION_P99_MS = 500;

type Started = Awaited<ReturnType<typeof startTarget>>;
/** The emulator's closing counts (its `EMULATOR {json}` line). */
type EmulatorCounts = Awaited<BenchEmulator['stats']>;

/** GET /status every 100 ms (during a lock: it must answer at once whatever the storage does). */
function statusProber(base: string): { stop(): number[] } {
  const ms: number[] = [];
  const timer = setInterval(() => {
    const t0 = performance.now();
    fetch(`${base}/status`)
      .then((r) => r.arrayBuffer())
      .then(
        () => ms.push(performance.now() - t0),
        () => ms.push(Infinity),
      );
  }, 100);
  return { stop: () => (clearInterval(timer), ms) };
}

/**
 * The service's own count of late decisions (GET /status `DecisionLatency.Late`, since its
 * start), read at the step's start and at each `read()`: `increments()` gives what each interval
 * added, so a soak shows when an episode came, not only that it did.
 */
export function lateCounter(base: string): { read(): void; increments(): Array<number | null> } {
  // Each read is a loopback GET, settled long before the step ends; one still pending counts as unanswered.
  const values: Array<number | null | undefined> = [];
  const read = () => {
    const i = values.length;
    values.push(undefined);
    fetch(`${base}/status`)
      .then((r) => r.json() as Promise<{ DecisionLatency?: { Late?: number } }>)
      .then(
        (s) => (values[i] = s.DecisionLatency?.Late ?? null),
        () => (values[i] = null),
      );
  };
  read();
  return {
    read,
    increments: () =>
      values.slice(1).map((v, i) => {
        const before = values[i];
        return typeof v === 'number' && typeof before === 'number' ? v - before : null;
      }),
  };
}

/** What a step measured of the processes between its start and its end. */
interface Readings {
  targetCpuMs: number;
  emulatorCpuMs: number;
  clientCpuUs: number;
  targetWritten: number;
  device: { ios: number; bytes: number } | null;
  syncs: number | null;
  stalls: number | null;
  peakRssMb: number;
  endRssMb: number;
  rssSeries: number[];
  lateSeries: Array<number | null>;
  wallMs: number;
  throttling: Throttling | null;
  /** The target's CPU by thread over the step (null: unreadable). */
  threadCpuMs: ThreadCpuMs | null;
}

/** Every `everyS`: the target's resident memory (MB) and, given the service's base, its late count's increase. */
function intervalSeries(t: Started, everyS: number, statusBase?: string) {
  const rssSeries: number[] = [];
  const late = statusBase ? lateCounter(statusBase) : null;
  const timer = setInterval(() => {
    rssSeries.push(Math.round(rssMb(pidOf(t.proc)) * 10) / 10);
    late?.read();
  }, everyS * 1000);
  return {
    stop: () => (clearInterval(timer), { rssSeries, lateSeries: late?.increments() ?? [] }),
  };
}

/**
 * Start reading the target's CPU, bytes, device writes, syncs and peak memory, the emulator's CPU
 * (the last reading before it exits) and this process's (the client's). `stop` gives the differences.
 */
function meters(
  t: Started,
  emu: BenchEmulator,
  cpuLimit: CpuLimit | undefined,
  rssEveryS?: number,
  statusBase?: string,
): { stop(): Readings } {
  const t0 = performance.now();
  const throttling = cpuLimit?.throttling();
  const stalls = t.syncs?.read().stalls ?? null;
  const targetCpu = cpuMs(pidOf(t.proc));
  const targetThreads = threadCpuMs(pidOf(t.proc));
  const written = writeBytes(pidOf(t.proc));
  const device = t.home ? deviceWrites(t.home) : null;
  const syncs = t.syncs?.total() ?? null;
  const clientCpu = process.cpuUsage();
  const emuStart = cpuMs(pidOf(emu.proc));
  let emuCpu = emuStart;
  let peakRssMb = 0;
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pidOf(t.proc)))), 200);
  const series = rssEveryS ? intervalSeries(t, rssEveryS, statusBase) : null;
  const emuWatch = setInterval(() => {
    const now = cpuMs(pidOf(emu.proc));
    if (!Number.isNaN(now)) emuCpu = now;
  }, 100);
  return {
    stop() {
      clearInterval(sampler);
      const { rssSeries, lateSeries } = series?.stop() ?? { rssSeries: [], lateSeries: [] };
      clearInterval(emuWatch);
      const device1 = t.home ? deviceWrites(t.home) : null;
      const syncs1 = t.syncs?.total() ?? null;
      const stalls1 = t.syncs?.read().stalls ?? null;
      const throttling1 = cpuLimit?.throttling();
      const client = process.cpuUsage(clientCpu);
      const endRssMb = rssMb(pidOf(t.proc));
      return {
        targetCpuMs: cpuMs(pidOf(t.proc)) - targetCpu,
        threadCpuMs: threadCpuSince(targetThreads, threadCpuMs(pidOf(t.proc))),
        emulatorCpuMs: emuCpu - emuStart,
        clientCpuUs: client.user + client.system,
        targetWritten: writeBytes(pidOf(t.proc)) - written,
        device: device && device1 ? { ios: device1.ios - device.ios, bytes: device1.bytes - device.bytes } : null,
        syncs: syncs !== null && syncs1 !== null ? syncs1 - syncs : null,
        stalls: stalls !== null && stalls1 !== null ? stalls1 - stalls : null,
        peakRssMb: Math.max(peakRssMb, endRssMb),
        endRssMb,
        rssSeries,
        lateSeries,
        wallMs: performance.now() - t0,
        throttling: throttlingBetween(throttling, throttling1),
      };
    },
  };
}

/**
 * Let the client fetch what is still queued (after an overload that can be a long backlog):
 * correctness is judged on everything, once it has been delivered.
 */
async function drained(base: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const s = (await (await fetch(`${base}/status`)).json()) as Record<string, number>;
    if (s['Sortation Q'] === 0 && s['Destination Q'] === 0) break;
    await sleep(100);
  }
  await sleep(1200);
}

/** A run's figures per completed cycle, from the emulator's and the client's counts and the readings. */
function stepResult(
  rate: number,
  seconds: number,
  e: EmulatorCounts,
  wcs: WcsStats,
  m: Readings,
  wake: { P50Ms: number | null; P99Ms: number | null },
  statusMs: number[],
): StepResult {
  // The cycles of the measured window: the items inducted in it and sorted as assigned, as the
  // emulator counts them (its --measure-after is the warm-up). The client's count of REQUESTs at
  // the window's start cannot stand in for it: in an overload REQUESTs outnumber the items sorted.
  const cycles = e.sorted_as_assigned_measured;
  const per = (n: number, digits: number) => Math.round((n / cycles) * 10 ** digits) / 10 ** digits;
  const threads = m.threadCpuMs;
  return {
    rate,
    cyclesPerS: cycles / seconds,
    sustained: e.rejected === 0 && e.recirculated <= 0.01 * e.inducted && (e.decision_p99_ms ?? Infinity) < SUSTAINED_DECISION_P99_MS,
    decisionP50: e.decision_p50_ms,
    decisionP99: e.decision_p99_ms,
    decisionMax: e.decision_max_ms ?? null,
    wakeP50: wake.P50Ms,
    wakeP99: wake.P99Ms,
    rssMb: Math.round(m.peakRssMb),
    rssEndMb: Math.round(m.endRssMb),
    ...(m.rssSeries.length > 0 ? { rssSeries: m.rssSeries } : {}),
    ...(m.lateSeries.length > 0 ? { lateSeries: m.lateSeries } : {}),
    cpuPctOfCore: Math.round((m.targetCpuMs / m.wallMs) * 1000) / 10,
    throttling: m.throttling,
    stalls: m.stalls,
    cpuUsPerCycle: {
      target: Math.round((m.targetCpuMs * 1000) / cycles),
      emulator: Math.round((m.emulatorCpuMs * 1000) / cycles),
      client: Math.round(m.clientCpuUs / cycles),
    },
    cpuUsPerCycleByThread: threads ? byThread((g) => Math.round((threads[g] * 1000) / cycles)) : null,
    diskKbPerCycle: per(m.targetWritten / 1024, 1),
    deviceKbPerCycle: m.device ? per(m.device.bytes / 1024, 1) : null,
    deviceWritesPerCycle: m.device ? per(m.device.ios, 2) : null,
    syncsPerCycle: m.syncs !== null ? per(m.syncs, 2) : null,
    lost: e.inducted - wcs.verified.size + e.unacknowledged_at_exit,
    duplicated: wcs.duplicate_requests + wcs.duplicate_verifies,
    recirculated: e.recirculated,
    rejected: e.rejected,
    late: e.late_assignments,
    passesWithoutAssignment: e.passes_without_assignment ?? 0,
    statusP99Ms:
      statusMs.length > 0
        ? Math.round(([...statusMs].sort((a, b) => a - b)[Math.floor(statusMs.length * 0.99)] ?? Number.NaN) * 10) / 10
        : null,
    reconnects: Math.max(0, e.connections - 1),
  };
}

/** The runs started in this process: the number in a run's decision log's name. */
let runsStarted = 0;

/** One run: emulator at `rate` for the plan's seconds, the target, the reference client. */
async function step(ctx: StepContext, target: Target, rate: number, seconds: number, options: StepOptions = {}): Promise<StepResult> {
  const warmupS = ctx.warmupS ?? 0;
  // The decision figures count the items of the measured window only, not the warm-up's (V8 still compiling).
  // The baseline speaks v1 only: with --layout it runs on v1, the service on the layout.
  const run = `${String(++runsStarted).padStart(3, '0')}-${target}-${rate}`;
  const decisionLog = ctx.decisionLogDir ? path.join(ctx.decisionLogDir, `${run}.csv`) : undefined;
  const emu = await startEmulator(rate, seconds + warmupS, 120, warmupS, isBaseline(target) ? 'v1' : ctx.layout, decisionLog);
  const t = await startTarget(target, emu.port, options.fsyncDelayMs ?? 0, {
    ...ctx,
    syncStall: options.syncStall,
    cpuLimit: options.cpuLimit,
  });
  const client = runWcsClient({ base: t.base, loops: ctx.clientLoops, timeOut: 1 });
  // A target that ends before the step does (a crash) fails the step at once, instead of the
  // emulator's whole duration and drain later.
  const failEarly = endedEarly(t.proc, describeTarget[target]);
  // From the first REQUEST the client is handed: the first item's work, not the start's.
  const timeline = ctx.threadTimelineDir
    ? startThreadTimeline(pidOf(t.proc), () => client.stats.requests > 0, path.join(ctx.threadTimelineDir, `${run}-threads.csv`))
    : null;
  let measuring: ReturnType<typeof meters> | undefined;
  try {
    // The emulator inducts from when the link is up: the warm-up counts from its first item, so that `seconds` of items remain.
    for (let i = 0; warmupS > 0 && client.stats.requests === 0 && i < 3000; i++) await sleep(10);
    await Promise.race([sleep(warmupS * 1000), failEarly.ended]);
    const prober = options.lock ? statusProber(t.base) : null;
    const { lock } = options;
    const home = t.home;
    const locked =
      lock && home ? sleep(lock.afterS * 1000 + 1000).then(() => holdWriteLock(path.join(home, 'data/sorter.db'), lock.forS)) : undefined;
    measuring = isBaseline(target)
      ? meters(t, emu, undefined, options.rssEveryS)
      : meters(t, emu, options.cpuLimit, options.rssEveryS, t.base);
    const e = await Promise.race([emu.stats, failEarly.ended]);
    await locked;
    const statusMs = prober?.stop() ?? [];
    await drained(t.base);
    const status = (await (await fetch(`${t.base}/status`)).json()) as { WakeLatency: { P50Ms: number | null; P99Ms: number | null } };
    const wcs = await client.stop();
    const readings = measuring.stop();
    timeline?.stop();
    failEarly.cancel();
    t.proc.kill('SIGTERM');
    await new Promise((r) => t.proc.once('exit', r));
    disposeTarget(t);
    return {
      ...stepResult(rate, seconds, e, wcs, readings, status.WakeLatency, statusMs),
      ...(t.nodeArgs ? { nodeArgs: t.nodeArgs } : {}),
    };
  } catch (err) {
    // Nothing of a failed step stays running (the bench's own exit would end them too: processes.ts).
    failEarly.cancel();
    measuring?.stop();
    // What it has read so far, if it can be written: the step's own error is the one to report.
    try {
      timeline?.stop();
    } catch {
      // the folder went away meanwhile
    }
    await client.stop().catch(() => undefined);
    emu.proc.kill('SIGKILL');
    if (t.proc.exitCode === null && t.proc.signalCode === null) {
      t.proc.kill('SIGKILL');
      await new Promise((r) => t.proc.once('exit', r));
    }
    disposeTarget(t);
    throw err;
  }
}

/** Rejects `ended` once `proc` exits, until `cancel()`: a target must outlive its step. */
function endedEarly(proc: ChildProcess, label: string): { ended: Promise<never>; cancel(): void } {
  let onExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  const ended = new Promise<never>((_, reject) => {
    onExit = (code, signal) => reject(new Error(`${label} exited in the middle of its step (${signal ?? `exit code ${code}`})`));
    proc.once('exit', onExit);
  });
  ended.catch(() => undefined); // raced, not awaited alone: a rejection nobody races is not an unhandled one
  return { ended, cancel: () => onExit && proc.off('exit', onExit) };
}

/** min/median/max of some runs' figures (a run without the figure left out). */
export function spread(values: ReadonlyArray<number | null>): string {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (known.length === 0) return '-';
  return `${Math.min(...known)}/${median(known)}/${Math.max(...known)}`;
}

/** Median over the plan's runs of one (target, rate); the step line gives the runs' spread as well. */
export async function medianStep(
  ctx: StepContext,
  target: Target,
  rate: number,
  seconds: number,
  options: StepOptions = {},
  label = describeTarget[target],
): Promise<StepResult> {
  const runs: StepResult[] = [];
  for (let i = 0; i < ctx.runs; i++) runs.push(await step(ctx, target, rate, seconds, options));
  const r = combineRuns(rate, runs);
  ctx.log(stepLine(label, r));
  return r;
}

/**
 * One step's result from its runs: each figure the runs' median (the peak resident memory their
 * highest; lost and duplicated their sums; the reconnects their most), sustained if most runs
 * were, and with several runs each run's figures in `runs`.
 */
export function combineRuns(rate: number, runs: readonly StepResult[]): StepResult {
  const pick = (f: (r: StepResult) => number | null) => median(runs.map((r) => f(r) ?? Number.NaN));
  const each: RunFigures = {
    decisionP99: runs.map((x) => x.decisionP99),
    cpuUsPerCycle: runs.map((x) => x.cpuUsPerCycle.target),
    late: runs.map((x) => x.late),
    passesWithoutAssignment: runs.map((x) => x.passesWithoutAssignment),
    rejected: runs.map((x) => x.rejected),
  };
  return {
    rate,
    cyclesPerS: pick((x) => x.cyclesPerS),
    sustained: runs.filter((x) => x.sustained).length * 2 > runs.length,
    decisionP50: pick((x) => x.decisionP50),
    decisionP99: pick((x) => x.decisionP99),
    decisionMax: pick((x) => x.decisionMax),
    wakeP50: pick((x) => x.wakeP50),
    wakeP99: pick((x) => x.wakeP99),
    rssMb: Math.max(...runs.map((x) => x.rssMb)),
    rssEndMb: pick((x) => x.rssEndMb),
    // A series is one run's (the memory step runs once): the first run's, if any.
    ...(runs[0]?.rssSeries ? { rssSeries: runs[0].rssSeries } : {}),
    ...(runs[0]?.lateSeries ? { lateSeries: runs[0].lateSeries } : {}),
    // The same command starts each run's service: the first run's options.
    ...(runs[0]?.nodeArgs ? { nodeArgs: runs[0].nodeArgs } : {}),
    cpuPctOfCore: pick((x) => x.cpuPctOfCore),
    throttling: runs.some((x) => x.throttling !== null)
      ? { periods: pick((x) => x.throttling?.periods ?? null), throttled: pick((x) => x.throttling?.throttled ?? null) }
      : null,
    stalls: runs.some((x) => x.stalls !== null) ? pick((x) => x.stalls) : null,
    cpuUsPerCycle: {
      target: median(runs.map((x) => x.cpuUsPerCycle.target)),
      emulator: median(runs.map((x) => x.cpuUsPerCycle.emulator)),
      client: median(runs.map((x) => x.cpuUsPerCycle.client)),
    },
    cpuUsPerCycleByThread: runs.every((x) => x.cpuUsPerCycleByThread !== null)
      ? byThread((g) => median(runs.map((x) => x.cpuUsPerCycleByThread?.[g] ?? 0)))
      : null,
    diskKbPerCycle: pick((x) => x.diskKbPerCycle),
    deviceKbPerCycle: runs.some((x) => x.deviceKbPerCycle !== null) ? pick((x) => x.deviceKbPerCycle) : null,
    deviceWritesPerCycle: runs.some((x) => x.deviceWritesPerCycle !== null) ? pick((x) => x.deviceWritesPerCycle) : null,
    syncsPerCycle: runs.some((x) => x.syncsPerCycle !== null) ? pick((x) => x.syncsPerCycle) : null,
    lost: runs.reduce((s, x) => s + x.lost, 0),
    duplicated: runs.reduce((s, x) => s + x.duplicated, 0),
    recirculated: pick((x) => x.recirculated),
    rejected: pick((x) => x.rejected),
    late: pick((x) => x.late),
    passesWithoutAssignment: pick((x) => x.passesWithoutAssignment),
    statusP99Ms: runs.some((x) => x.statusP99Ms !== null) ? pick((x) => x.statusP99Ms) : null,
    reconnects: Math.max(...runs.map((x) => x.reconnects)),
    runs: each,
  };
}

/**
 * A step's line in the benchmark's log: the median run's figures, and over several runs the
 * spread of the decision p99 and the CPU per cycle (min/median/max) and each run's late,
 * without-assignment and rejected counts (`late 0,3,0`: a count in one run of three is a finding
 * the median hides).
 */
export function stepLine(label: string, r: StepResult): string {
  const each = r.runs;
  const runCount = each?.late.length ?? 1;
  const counts = (xs: readonly number[]) => xs.join(',');
  return `  ${label.padEnd(40)} rate ${String(r.rate).padStart(5)}/s  cycles ${r.cyclesPerS.toFixed(0).padStart(5)}/s  ${r.sustained ? 'sustained' : 'BROKE DOWN'}  decision p99 ${r.decisionP99} ms  wake p99 ${r.wakeP99} ms  rss ${r.rssMb} MB  cpu µs/cycle ${r.cpuUsPerCycle.target}/${r.cpuUsPerCycle.emulator}/${r.cpuUsPerCycle.client}${r.cpuUsPerCycleByThread ? ` (main ${r.cpuUsPerCycleByThread.main}, writer ${r.cpuUsPerCycleByThread.writer}, checkpoint ${r.cpuUsPerCycleByThread.checkpoint}, other ${r.cpuUsPerCycleByThread.other})` : ''}  disk ${r.diskKbPerCycle} KB/cycle (device ${r.deviceKbPerCycle ?? '-'} KB, ${r.deviceWritesPerCycle ?? '-'} writes), ${r.syncsPerCycle ?? '-'} syncs/cycle  late ${r.late}  passes w/o assignment ${r.passesWithoutAssignment}  rejected ${r.rejected}  lost ${r.lost}  dup ${r.duplicated}${r.statusP99Ms !== null ? `  status p99 ${r.statusP99Ms} ms  reconnects ${r.reconnects}` : ''}${r.stalls ? `  stalls ${r.stalls}, decision max ${r.decisionMax} ms` : ''}${r.throttling ? `  cpu ${r.cpuPctOfCore}% of a core, throttled in ${r.throttling.throttled} of ${r.throttling.periods} periods` : ''}${each && runCount > 1 ? `  over ${runCount} runs: decision p99 ${spread(each.decisionP99)} ms, cpu µs/cycle ${spread(each.cpuUsPerCycle)}; each run late ${counts(each.late)}, passes w/o assignment ${counts(each.passesWithoutAssignment)}, rejected ${counts(each.rejected)}` : ''}`;
}
