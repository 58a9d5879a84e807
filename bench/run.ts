/**
 * `npm run bench [-- --quick]`: the project's benchmark (docs/performance.md). Drives the sorter
 * emulator with reference-client loops against the service and against a minimal baseline
 * (bench/baseline.ts), each figure the median of several runs, and checks in every run that
 * nothing was lost or duplicated. Prints a table and, last, one line `BENCH {json}`.
 * Here: the plan (quick or full, and the flags that override it), the steps in order, the report.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LayoutError, loadLayout } from '../lib/layout/load';
import { layoutFile } from '../lib/layout/site-layout';
import { commandLine, nonNegative } from '../lib/process/command-line';
import { projectRoot } from '../lib/process/paths';
import { errorMessage } from '../lib/process/errors';
import { HELPER_THREAD_NICE, lowerHelperThreadsAtStart } from '../lib/process/thread-priority';
import { type CpuLimit, createCpuLimit, parseCpuPct } from './cpu-limit';
import { type CpuPairs, PAIR_RATES, measureCpuPairs } from './cpu-pairs';
import { idleProbe } from './idle';
import {
  LAUNCHER,
  type Target,
  allTargets,
  describeTarget,
  endWithTheBench,
  isBaseline,
  parseNodeArgs,
  parseServiceConfig,
} from './processes';
import { popMicros, purgeProbe, seedProbe } from './scale';
import {
  type Measured,
  type PurgeResult,
  type ScaleResult,
  type StorageResult,
  type TargetResult,
  benchLine,
  correctness,
  printReport,
} from './report';
import { type SyncStall, parseSyncStall } from './slow-disk';
import { describeHistorySize, historySize, parseCards } from './history-size';
import { type StepOptions, type StepResult, medianStep } from './step';

const args = commandLine(
  'bench',
  'npm run bench -- [options]   (docs/performance.md, "Reproduce", says what each does; e.g. --sync-stall 1000/10, --service-cpu 25; a value that starts with "-" after "=": --service-node-args="--single-threaded-gc")',
  {
    quick: { type: 'boolean', default: false },
    // For focused measurements (docs/performance.md): override parts of the plan.
    targets: { type: 'string' },
    rates: { type: 'string' },
    runs: { type: 'string' },
    seconds: { type: 'string' },
    'no-scale': { type: 'boolean', default: false },
    'no-storage': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'decision-log': { type: 'string' },
    'thread-timeline': { type: 'string' },
    'fsync-delay-ms': { type: 'string', default: '0' },
    'sync-stall': { type: 'string' },
    'service-cpu': { type: 'string' },
    'service-node-args': { type: 'string' },
    'no-idle': { type: 'boolean', default: false },
    'service-root': { type: 'string' },
    'site-rate': { type: 'string' },
    'card-gb': { type: 'string' },
    'service-config': { type: 'string' },
    'warmup-s': { type: 'string', default: '0' },
    'memory-minutes': { type: 'string', default: '0' },
    'cpu-pairs': { type: 'string' },
    layout: { type: 'string', default: 'v1' },
  },
);
const quick = args.quick === true;
const plan: { runs: number; seconds: number; rates: number[]; targets: Target[]; scaleRows: number; clientLoops: number } = quick
  ? { runs: 1, seconds: 3, rates: [300, 1000], targets: ['baseline', 'service'], scaleRows: 100_000, clientLoops: 8 }
  : {
      runs: 3,
      seconds: 8,
      rates: [200, 500, 1000, 1500, 2000, 2500, 3000],
      targets: ['baseline', 'service', 'service-normal', 'service-nogroup'],
      scaleRows: 1_000_000,
      clientLoops: 8,
    };
if (args.targets) {
  const named = args.targets.split(',');
  const isTarget = (t: string): t is Target => (allTargets as readonly string[]).includes(t);
  plan.targets = named.filter(isTarget);
  const unknown = named.filter((t) => !isTarget(t));
  if (unknown.length > 0 || !plan.targets.includes('baseline') || !plan.targets.includes('service')) {
    console.error(`bench: --targets takes a comma-separated list of ${allTargets.join(', ')}, including baseline and service`);
    process.exit(2);
  }
}
if (args.rates) plan.rates = args.rates.split(',').map(Number);
if (args.runs) plan.runs = Number(args.runs);
if (args.seconds) plan.seconds = Number(args.seconds);
if ([...plan.rates, plan.runs, plan.seconds].some((n) => !Number.isFinite(n) || n <= 0)) {
  console.error('bench: --rates, --runs and --seconds take positive numbers');
  process.exit(2);
}
const scale = !args['no-scale'];
/** The slow-disk and operator-lock steps (docs/performance.md, "Slow storage"). */
const storageSteps = !args['no-storage'];
/** Every fsync of the service targets in the main plan takes this much longer (ms). */
const fsyncDelayMs = nonNegative('bench', 'fsync-delay-ms', args['fsync-delay-ms']);
/** The main plan's service targets' syncs stall: `MS/EVERY_S`, an SD card under sustained writes. */
const syncStall = args['sync-stall'] !== undefined ? orExit('sync-stall', parseSyncStall(args['sync-stall'])) : null;
/** The main plan's service targets may use this percentage of one core (a slower CPU), in a cgroup of their own. */
const serviceCpuPct = args['service-cpu'] !== undefined ? orExit('service-cpu', parseCpuPct(args['service-cpu'])) : null;
/** Node's options for every service the bench starts (`--service-node-args`); by default its launcher chooses them, as in the units. */
const serviceNodeArgs =
  args['service-node-args'] !== undefined ? orExit('service-node-args', parseNodeArgs(args['service-node-args'])) : undefined;
/** The idle probe: the service connected to its sorter with nothing to do. */
const idleStep = !args['no-idle'];
/** Another checkout's build to run as the service (before/after comparisons); this one by default. */
const serviceRoot = path.resolve(args['service-root'] ?? projectRoot);
/** Folder for `node --cpu-prof` profiles of the service (one per run), if asked for. */
const cpuProfDir = args['cpu-prof'];
/** Folder for each run's decision samples (the emulator's `--decision-log`, a CSV file a run), if asked for. */
const decisionLogDir =
  args['decision-log'] !== undefined
    ? orExit('decision-log', runFilesFolder(args['decision-log'], "each run's decision samples")).dir
    : undefined;
/** Folder for each run's CPU thread by thread in windows of 250 ms from its first item (bench/thread-timeline.ts, a CSV file a run), if asked for. */
const threadTimelineDir =
  args['thread-timeline'] !== undefined
    ? orExit('thread-timeline', runFilesFolder(args['thread-timeline'], "each run's CPU thread by thread")).dir
    : undefined;
/** A site's items a second around the clock: the service also runs a step at it, and its storage's wear is projected. */
const siteRate = args['site-rate'] !== undefined ? nonNegative('bench', 'site-rate', args['site-rate']) : null;
if (siteRate === 0) {
  console.error('bench: --site-rate takes a positive number of items a second');
  process.exit(2);
}

/** The cards the site's history is projected on (--card-gb, with --site-rate): how many days of history fit on each. */
const cardsGb = orExit('card-gb', parseCards(args['card-gb']));

/** The telegram layout the service and its emulator speak (the baseline speaks v1): a shipped one by name or a file. */
const layout = args.layout;
/** Its file, checked before anything runs (a problem: one line, exit 2), given as a full path to the emulator and the service. */
const layoutPath = orExit('layout', checkLayout(layout)).file;

/** Settings for the service's config.json, as JSON (e.g. '{"CommitWindowMs":30}'): what a site would change. */
const serviceConfig = parseServiceConfig('bench', args['service-config']);

/** Seconds of traffic before each step's measurements start: the figures of a warmed-up process (V8 has compiled its hot code). */
const warmupS = nonNegative('bench', 'warmup-s', args['warmup-s']);

/** Minutes of the memory step: the service at the site's rate (50 items/s without --site-rate) from its start, its memory read every minute (0: no such step). */
const memoryMinutes = nonNegative('bench', 'memory-minutes', args['memory-minutes']);

/**
 * Pairs of steps, the baseline and the service side by side, at 50 and at 600 items/s: the CPU
 * ratio's spread (bench/cpu-pairs.ts). 3 in the full run, none in the quick one unless asked for.
 */
const cpuPairs = args['cpu-pairs'] !== undefined ? pairCount(args['cpu-pairs']) : quick ? 0 : 3;

const log = (line: string) => process.stderr.write(`${line}\n`);

/** A flag's parsed value, or its problem as one line and exit 2. */
function orExit<T>(flag: string, parsed: T | string): T {
  if (typeof parsed !== 'string') return parsed;
  console.error(`bench: --${flag} ${parsed}`);
  process.exit(2);
}

/** The layout's file, or its problems as one line. */
function checkLayout(name: string): { file: string } | string {
  try {
    const file = layoutFile(process.cwd(), name);
    loadLayout(file);
    return { file };
  } catch (err) {
    if (!(err instanceof LayoutError)) throw err;
    const [head = '', ...problems] = err.message.split('\n').map((l) => l.trim().replace(/^- /, ''));
    return `${name}: ${head} ${problems.filter(Boolean).join('; ')}`;
  }
}

/** The folder of --decision-log or --thread-timeline (a file a run of `what`), made if missing; else what is wrong (for orExit). */
function runFilesFolder(value: string, what: string): { dir: string } | string {
  if (value.trim() === '') return `takes a folder for ${what} (a file a run), e.g. /tmp/runs; got ""`;
  const dir = path.resolve(value);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return { dir };
  } catch (err) {
    return `takes a folder it can write; ${dir}: ${errorMessage(err)}`;
  }
}

/** A whole number of pairs, or the problem as one line and exit 2. */
function pairCount(value: string): number {
  const n = Number(value);
  if (value.trim() !== '' && Number.isInteger(n) && n >= 0) return n;
  console.error(`bench: --cpu-pairs takes a whole number of pairs (0: none), e.g. 3; got ${JSON.stringify(value)}`);
  process.exit(2);
}

/** The storage steps' SD card stalls: a second every 10 s, as consumer cards pause under sustained writes. */
const STALL_STEP: SyncStall = { ms: 1000, everyS: 10 };

const ctx = {
  runs: plan.runs,
  clientLoops: plan.clientLoops,
  serviceRoot,
  cpuProfDir,
  decisionLogDir,
  threadTimelineDir,
  serviceConfig,
  warmupS,
  log,
  layout: layoutPath,
  nodeArgs: serviceNodeArgs,
};

/** The service's cgroup (`--service-cpu`), once it is made; why not, where it cannot be. */
let cpuLimit: CpuLimit | undefined;
let cpuLimitSkipped: string | null = null;

/** What the main plan does to a target's disk and CPU: the service's only, never the baseline's. */
const mainPlanOptions = (target: Target): StepOptions =>
  isBaseline(target) ? {} : { fsyncDelayMs, syncStall: syncStall ?? undefined, cpuLimit };

/** A target at 50 items/s, then up the plan's rates until one is not sustained. */
async function measureTarget(target: Target): Promise<TargetResult> {
  log(`${describeTarget[target]}:`);
  const options = mainPlanOptions(target);
  const at50 = await medianStep(ctx, target, 50, plan.seconds, options);
  const ramp: StepResult[] = [];
  const rates = [...plan.rates];
  // entries() reads the length at each step: a rate pushed below is still visited.
  for (const [i, rate] of rates.entries()) {
    const r = await medianStep(ctx, target, rate, plan.seconds, options);
    ramp.push(r);
    if (!r.sustained) break;
    // The baseline's ramp goes on until it breaks down too, so that the throughput ratio is
    // a measurement, not an upper bound (full runs; the quick one is a smoke test).
    if (target === 'baseline' && !quick && i === rates.length - 1 && rate < 20_000)
      rates.push(Math.max(Math.round((rate * 1.5) / 500) * 500, Math.ceil(rate * 1.5)));
  }
  const best = ramp.filter((r) => r.sustained).at(-1);
  return { ramp, at50, max: best ? best.cyclesPerS : 0, atMax: best, brokeDown: ramp.some((r) => !r.sustained) };
}

/**
 * Slow storage (docs/performance.md): an SD card (+20 ms a sync) at a fast sorter's 50 items/s,
 * the throughput of consumer SSDs and eMMC (+5 ms), and an operator's 10 s write lock.
 */
async function measureStorage(): Promise<StorageResult> {
  const storage: StorageResult = { slow5: { max: null, ramp: [] } };
  if (!storageSteps) return storage;
  log('storage:');
  storage.slow20 = await medianStep(ctx, 'service', 50, quick ? 5 : 10, { fsyncDelayMs: 20 }, 'service, fsync +20 ms');
  // Long enough for a stall in every run: the first comes 10 s after the service's start.
  storage.stallOf = STALL_STEP;
  storage.stall = await medianStep(
    ctx,
    'service',
    50,
    quick ? 12 : 30,
    { syncStall: STALL_STEP },
    `service, ${STALL_STEP.ms} ms sync stall every ${STALL_STEP.everyS} s`,
  );
  if (quick) return storage;
  for (const rate of [250, 500, 750, 1000, 1250, 1500, 2000, 2500]) {
    const r = await medianStep(ctx, 'service', rate, plan.seconds, { fsyncDelayMs: 5 }, 'service, fsync +5 ms');
    storage.slow5.ramp.push(r);
    if (!r.sustained) break;
  }
  const ok = storage.slow5.ramp.filter((r) => r.sustained);
  const fastest = ok.at(-1);
  storage.slow5.max = fastest ? Math.round(fastest.cyclesPerS) : 0;
  storage.lock = await medianStep(ctx, 'service', 50, 20, { lock: { afterS: 5, forS: 10 } }, 'service, 10 s write lock');
  return storage;
}

/** The service at the site's rate (--site-rate): its step at 50 items/s, or one of its own. */
async function measureSite(service: TargetResult): Promise<StepResult | undefined> {
  if (siteRate === null) return undefined;
  log('site:');
  if (siteRate === 50) return service.at50;
  return medianStep(ctx, 'service', siteRate, plan.seconds, mainPlanOptions('service'), `service at the site rate`);
}

/** The CPU ratio in pairs at each of PAIR_RATES (--cpu-pairs), with the main plan's settings for each target. */
async function measurePairs(): Promise<CpuPairs[] | undefined> {
  if (cpuPairs === 0) return undefined;
  log('cpu pairs:');
  const all: CpuPairs[] = [];
  const withHapi = plan.targets.includes('baseline-hapi');
  for (const rate of PAIR_RATES) all.push(await measureCpuPairs(ctx, rate, cpuPairs, plan.seconds, mainPlanOptions, withHapi));
  return all;
}

/** The hourly history purge while the sorter's messages arrive: on an SD card in the full run, on this disk in the quick one. */
async function measurePurge(): Promise<PurgeResult | undefined> {
  if (!storageSteps) return undefined;
  const [hours, purgeHours, delay] = quick ? [2, 1, 0] : [4, 3, 20];
  const purge = { ...(await purgeProbe(hours, purgeHours, delay)), fsyncDelayMs: delay };
  log(
    `  history purge of ${purge.chunks.purged.toLocaleString('en')} rows (fsync +${delay} ms), a message's commit p99/max: one transaction ${purge.one.commitP99Ms} / ${purge.one.commitMaxMs} ms, chunks ${purge.chunks.commitP99Ms} / ${purge.chunks.commitMaxMs} ms (${purge.chunks.seconds} s)`,
  );
  return purge;
}

/** A pop at 2,000 and at the plan's rows queued, and seeding that many CSV rows. */
async function measureScale(): Promise<ScaleResult> {
  if (!scale)
    return { popEmpty: Number.NaN, popFull: Number.NaN, seed: { seconds: Number.NaN, maxRssMb: Number.NaN, rows: 0 }, count: null };
  log('scale:');
  const popEmpty = (await popMicros(2000)).popMicros;
  const { popMicros: popFull, count } = await popMicros(plan.scaleRows);
  log(`  pop median ${popEmpty.toFixed(1)} µs at 2,000 queued; ${popFull.toFixed(1)} µs at ${plan.scaleRows.toLocaleString('en')} queued`);
  log(
    `  counting ${plan.scaleRows.toLocaleString('en')} queued (GET /status, a scrape): whole ${count.wholeMs.toFixed(1)} ms; in slices ${count.slicedMs.toFixed(1)} ms, the longest ${count.longestSliceMs.toFixed(2)} ms`,
  );
  const seed = await seedProbe(plan.scaleRows);
  log(`  seeding ${seed.rows.toLocaleString('en')} CSV rows: ${seed.seconds.toFixed(1)} s, peak RSS ${seed.maxRssMb.toFixed(0)} MB`);
  return { popEmpty, popFull, seed, count };
}

/**
 * The service for `memoryMinutes` at the site's rate (50 items/s without one), from its start, its
 * resident memory read at the end of every minute: what a short step cannot show (caches that
 * fill, heaps that grow to their limits, anything that leaks).
 */
async function measureMemory(): Promise<StepResult | undefined> {
  if (memoryMinutes === 0) return undefined;
  log('memory:');
  const rate = siteRate ?? 50;
  return medianStep(
    { ...ctx, runs: 1, warmupS: 0 },
    'service',
    rate,
    Math.round(memoryMinutes * 60),
    { ...mainPlanOptions('service'), rssEveryS: 60 },
    `service, ${memoryMinutes} min at ${rate}/s`,
  );
}

/** The service idle with its sorter connected and a WCS waiting: CPU, threads, memory. */
async function measureIdle() {
  if (!idleStep) return undefined;
  log('idle:');
  // On a slower CPU (--service-cpu) it idles in the same cgroup: the launcher chooses its options there.
  const idle = await idleProbe({ serviceRoot, serviceConfig, layout: layoutPath, nodeArgs: serviceNodeArgs, cpuLimit }, quick ? 15 : 20);
  const held = idle.throttling
    ? `, in the cgroup of --service-cpu: throttled in ${idle.throttling.throttled} of ${idle.throttling.periods} periods`
    : '';
  log(
    `  service idle, sorter connected, two long polls waiting, ${idle.seconds} s: ${idle.cpuPct}% of a core, ${idle.threads} threads, RSS ${idle.rssMb} MB${held}`,
  );
  return idle;
}

/** The cgroup of `--service-cpu`, or the one line saying why it is skipped; removed however the bench ends. */
function setUpCpuLimit(pct: number): void {
  const made = createCpuLimit(pct);
  if (typeof made === 'string') {
    cpuLimitSkipped = made;
    log(`--service-cpu ${pct} skipped: ${made}; the service runs unlimited`);
    return;
  }
  cpuLimit = made;
  process.once('exit', () => made.remove()); // after endWithTheBench's: its children killed, what is left moved out
  log(`the service targets limited to ${pct}% of one core (cgroup v${made.version} ${made.dir}, --service-cpu)`);
}

/** What the flags change in the plan, a line each (and the cgroup of `--service-cpu` made). */
function logTheFlags(): void {
  if (fsyncDelayMs > 0) log(`every fsync of the service targets ${fsyncDelayMs} ms slower (--fsync-delay-ms)`);
  if (syncStall) log(`the service targets' syncs stall ${syncStall.ms} ms every ${syncStall.everyS} s (--sync-stall)`);
  if (serviceCpuPct !== null) setUpCpuLimit(serviceCpuPct);
  if (layout !== 'v1') log(`the service targets and their emulator speak the ${layout} layout (--layout); the baseline speaks v1`);
  if (serviceConfig) log(`the service targets run with ${JSON.stringify(serviceConfig)} in their config.json (--service-config)`);
  if (serviceRoot !== projectRoot) log(`service from ${serviceRoot} (--service-root)`);
  if (decisionLogDir) log(`each run's decision samples in ${decisionLogDir}, a CSV file a run: NNN-TARGET-RATE.csv (--decision-log)`);
  if (threadTimelineDir)
    log(
      `each run's CPU thread by thread, in windows of 250 ms from its first item, in ${threadTimelineDir}, a CSV file a run: NNN-TARGET-RATE-threads.csv (--thread-timeline)`,
    );
  if (serviceNodeArgs)
    log(
      `the service targets run as node ${[...serviceNodeArgs, 'dist/lib/main.js'].join(' ')} (--service-node-args; the units run ${LAUNCHER}, which chooses V8's collector from the CPU)`,
    );
}

async function main() {
  endWithTheBench(); // first: its exit hook kills the children before the cgroup's removes the group
  // The WCS client loops run in this process: its own V8 compiling must not take the cores the
  // measured targets wait for (both targets alike; the service lowers its own helpers too).
  await lowerHelperThreadsAtStart(HELPER_THREAD_NICE);
  const started = Date.now();
  log(
    `bench (${quick ? 'quick' : 'full'}): ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.cpus()[0]?.model}, node ${process.version}`,
  );
  logTheFlags();
  const measuredTargets: Record<string, TargetResult> = {};
  for (const target of plan.targets) measuredTargets[target] = await measureTarget(target);
  const { baseline, service } = measuredTargets;
  if (!baseline || !service) throw new Error('bench: the plan measures the baseline and the service');
  const results = { ...measuredTargets, baseline, service };
  const site = await measureSite(results.service);
  // What the site's history takes a day, and the days that fit on its card (docs/operations.md, "Sizing the card").
  const history = siteRate !== null ? historySize(siteRate, cardsGb) : undefined;
  if (history) log(`  ${describeHistorySize(history)}`);
  const measured: Measured = {
    results,
    cpuPairs: await measurePairs(),
    site,
    history,
    storage: await measureStorage(),
    purge: await measurePurge(),
    scale: await measureScale(),
    idle: await measureIdle(),
    // The memory step runs with the main plan's settings, in the cgroup of --service-cpu too.
    memory: await measureMemory(),
  };
  cpuLimit?.remove();
  const report = {
    quick,
    scaleRows: plan.scaleRows,
    siteRate,
    fsyncDelayMs,
    serviceConfig,
    warmupS,
    memoryMinutes,
    syncStall,
    serviceCpuPct: cpuLimit ? serviceCpuPct : null,
    serviceCpuSkipped: cpuLimitSkipped,
    layout,
    serviceNodeArgs,
  };
  printReport(measured, report, started);
  console.log(`BENCH ${JSON.stringify(benchLine(measured, report))}`);
  const { lost, duplicated, purgeWrong } = correctness(measured, siteRate);
  if (lost !== 0 || duplicated !== 0 || purgeWrong) {
    console.error(
      `bench: FAILED correctness: ${lost} lost, ${duplicated} duplicated${purgeWrong ? '; the history purge did not remove exactly the rows older than its cutoff' : ''}`,
    );
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err.stack ?? err}`);
  process.exit(1);
});
