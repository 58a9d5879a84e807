import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { openDatabase } from '../db/connection';
import { createQueueStore } from '../db/queue-store';
import { runWcsClient } from '../examples/wcs-client';
import type { InductDto } from '../lib/messages';
import { projectRoot } from '../lib/paths';
import { CSV_COLUMNS } from '../lib/replay';
import { slowFsyncEnv } from './slow-disk';

/**
 * `npm run bench [-- --quick]`: the project's benchmark (docs/performance.md). Drives the sorter
 * emulator with reference-client loops against the service and against a minimal baseline
 * (bench/baseline.ts), each figure the median of several runs, and checks in every run that
 * nothing was lost or duplicated. Prints a table and, last, one line `BENCH {json}`.
 */
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    // For focused measurements (docs/performance.md): override parts of the plan.
    targets: { type: 'string' },
    rates: { type: 'string' },
    runs: { type: 'string' },
    seconds: { type: 'string' },
    'no-scale': { type: 'boolean', default: false },
    'no-storage': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'fsync-delay-ms': { type: 'string', default: '0' },
    'service-root': { type: 'string' },
  },
});
const quick = args.quick!;
const plan = quick
  ? { runs: 1, seconds: 3, rates: [300, 1000], targets: ['baseline', 'service'] as Target[], scaleRows: 100_000, clientLoops: 8 }
  : { runs: 3, seconds: 8, rates: [200, 500, 1000, 1500, 2000, 2500, 3000], targets: ['baseline', 'service', 'service-normal', 'service-nogroup'] as Target[], scaleRows: 1_000_000, clientLoops: 8 };
const allTargets: Target[] = ['baseline', 'service', 'service-normal', 'service-nogroup'];
if (args.targets) {
  plan.targets = args.targets.split(',') as Target[];
  const unknown = plan.targets.filter((t) => !allTargets.includes(t));
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
const fsyncDelayMs = Number(args['fsync-delay-ms']);
if (!Number.isFinite(fsyncDelayMs) || fsyncDelayMs < 0) {
  console.error('bench: --fsync-delay-ms takes a non-negative number of milliseconds');
  process.exit(2);
}
/** Another checkout's build to run as the service (before/after comparisons); this one by default. */
const serviceRoot = path.resolve(args['service-root'] ?? projectRoot);
/** Folder for `node --cpu-prof` profiles of the service (one per run), if asked for. */
const cpuProfDir = args['cpu-prof'];

type Target = 'baseline' | 'service' | 'service-normal' | 'service-nogroup';
const describeTarget: Record<Target, string> = {
  baseline: 'baseline (node:http, in memory)',
  service: 'service, FULL + group commit (default)',
  'service-normal': 'service, NORMAL + group commit',
  'service-nogroup': 'service, FULL, no group commit',
};

const dist = (p: string) => path.join(projectRoot, 'dist', p);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Start a node child; resolve when a stdout line satisfies `ready` (returning its value). */
function start<T>(script: string, argv: string[], env: NodeJS.ProcessEnv, ready: (line: string) => T | undefined, onLine: (l: string) => void = () => {}, nodeArgs: string[] = []): Promise<{ proc: ChildProcess; value: T }> {
  const proc = spawn(process.execPath, [...nodeArgs, script, ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${path.basename(script)} exited (${code}): ${stderr.slice(-500)}`)));
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
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

async function startTarget(target: Target, sorterPort: number, delayMs: number): Promise<{ proc: ChildProcess; base: string; home?: string }> {
  if (target === 'baseline') {
    const { proc, value } = await start(dist('bench/baseline.js'), ['--port', '0', '--sorter-port', String(sorterPort)], {}, urlOf);
    return { proc, base: value };
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-home-'));
  const config = {
    TestMode: false,
    Port: 0,
    Host: '127.0.0.1',
    Synchronous: target === 'service-normal' ? 'NORMAL' : 'FULL',
    GroupCommit: target !== 'service-nogroup',
    Sorter: { Host: '127.0.0.1', Port: sorterPort, TrafficLog: true },
  };
  fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify(config));
  const prof = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(cpuProfDir)] : [];
  const { proc, value } = await start(path.join(serviceRoot, 'dist', 'lib', 'main.js'), [], { SORTER_HOME: home, ...slowFsyncEnv(delayMs) }, urlOf, () => {}, prof);
  return { proc, base: value, home };
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used so far, in ms. */
function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return Number.NaN;
  }
}

interface StepResult {
  rate: number;
  cyclesPerS: number;
  sustained: boolean;
  decisionP50: number | null;
  decisionP99: number | null;
  wakeP50: number | null;
  wakeP99: number | null;
  rssMb: number;
  /** CPU time per completed cycle: the target, the emulator, and the client (this process). */
  cpuUsPerCycle: { target: number; emulator: number; client: number };
  lost: number;
  duplicated: number;
  recirculated: number;
  rejected: number;
  /** Assignments that reached the sorter after their item's decision. */
  late: number;
  /** GET /status round trips during the run, p99 (ms), and the link's reconnects. */
  statusP99Ms: number | null;
  reconnects: number;
}

/** How a step's storage is made worse: slower fsync, and an operator's write lock held for a while. */
interface StepOptions {
  fsyncDelayMs?: number;
  lock?: { afterS: number; forS: number };
}

/**
 * A rate counts as sustained when its decision round trip p99 stays under a third of the
 * emulator's 1.5 s decision window (so a WCS still has most of the window for itself), nothing
 * is rejected and under 1% of items recirculate.
 */
const SUSTAINED_DECISION_P99_MS = 500;

/** Hold the database's write lock from an sqlite3 process, as an operator's open transaction does. */
async function holdWriteLock(file: string, forS: number): Promise<void> {
  const sqlite = spawn('sqlite3', [file], { stdio: ['pipe', 'ignore', 'inherit'] });
  sqlite.stdin!.write('.timeout 5000\nBEGIN IMMEDIATE;\nSELECT 1;\n');
  await sleep(forS * 1000);
  sqlite.stdin!.end('COMMIT;\n');
  await new Promise((r) => sqlite.once('exit', r));
}

/** One run: emulator at `rate` for the plan's seconds, the target, the reference client. */
async function step(target: Target, rate: number, seconds: number, options: StepOptions = {}): Promise<StepResult> {
  let emuLine = '';
  const emu = await start(dist('emulator/main.js'), ['--port', '0', '--rate', String(rate), '--seed', '11', '--duration', String(seconds), '--capacity', '100000000', '--drain-timeout', '120', '--start-when-connected', '1000'], {}, (l) => {
    const m = /^emulator listening on [\d.]+:(\d+)$/.exec(l);
    return m ? Number(m[1]) : undefined;
  }, (l) => l.startsWith('EMULATOR ') && (emuLine = l));
  const emuExit = new Promise((r) => emu.proc.once('exit', r));
  const t = await startTarget(target, emu.value, options.fsyncDelayMs ?? 0);
  const client = runWcsClient({ base: t.base, loops: plan.clientLoops, timeOut: 1 });
  // With a lock, /status is probed every 100 ms: it must answer at once whatever the storage does.
  const statusMs: number[] = [];
  const prober = options.lock
    ? setInterval(() => {
        const t0 = performance.now();
        fetch(`${t.base}/status`).then((r) => r.arrayBuffer()).then(() => statusMs.push(performance.now() - t0), () => statusMs.push(Infinity));
      }, 100)
    : undefined;
  const locked = options.lock && t.home ? sleep(options.lock.afterS * 1000 + 1000).then(() => holdWriteLock(path.join(t.home!, 'data/sorter.db'), options.lock!.forS)) : undefined;
  let peakRss = 0;
  let targetCpu = cpuMs(t.proc.pid!);
  let emuCpu = cpuMs(emu.proc.pid!);
  const clientCpu = process.cpuUsage();
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(t.proc.pid!))), 200);
  // The emulator's CPU: the last reading before it exits.
  const emuStart = emuCpu;
  const emuWatch = setInterval(() => {
    const now = cpuMs(emu.proc.pid!);
    if (!Number.isNaN(now)) emuCpu = now;
  }, 100);
  await emuExit;
  await locked;
  clearInterval(emuWatch);
  clearInterval(prober);
  emuCpu -= emuStart;
  // Let the client fetch what is still queued (after an overload that can be a long backlog):
  // correctness is judged on everything, once it has been delivered.
  for (let i = 0; i < 1200; i++) {
    const s = (await (await fetch(`${t.base}/status`)).json()) as Record<string, number>;
    if (s['Sortation Q'] === 0 && s['Destination Q'] === 0) break;
    await sleep(100);
  }
  await sleep(1200);
  const status = (await (await fetch(`${t.base}/status`)).json()) as { WakeLatency: { P50Ms: number | null; P99Ms: number | null } };
  const wcs = await client.stop();
  clearInterval(sampler);
  targetCpu = cpuMs(t.proc.pid!) - targetCpu;
  const clientUsage = process.cpuUsage(clientCpu);
  t.proc.kill('SIGTERM');
  await new Promise((r) => t.proc.once('exit', r));
  if (t.home) fs.rmSync(t.home, { recursive: true, force: true });
  const e = JSON.parse(emuLine.slice('EMULATOR '.length));
  const lost = e.inducted - wcs.verified.size + e.unacknowledged_at_exit;
  const duplicated = wcs.duplicate_requests + wcs.duplicate_verifies;
  return {
    rate,
    cyclesPerS: e.sorted_as_assigned / seconds,
    sustained: e.rejected === 0 && e.recirculated <= 0.01 * e.inducted && (e.decision_p99_ms ?? Infinity) < SUSTAINED_DECISION_P99_MS,
    decisionP50: e.decision_p50_ms,
    decisionP99: e.decision_p99_ms,
    wakeP50: status.WakeLatency.P50Ms,
    wakeP99: status.WakeLatency.P99Ms,
    rssMb: Math.round(peakRss),
    cpuUsPerCycle: {
      target: Math.round((targetCpu * 1000) / e.sorted_as_assigned),
      emulator: Math.round((emuCpu * 1000) / e.sorted_as_assigned),
      client: Math.round((clientUsage.user + clientUsage.system) / e.sorted_as_assigned),
    },
    lost,
    duplicated,
    recirculated: e.recirculated,
    rejected: e.rejected,
    late: e.late_assignments,
    statusP99Ms: statusMs.length > 0 ? Math.round([...statusMs].sort((a, b) => a - b)[Math.floor(statusMs.length * 0.99)] * 10) / 10 : null,
    reconnects: Math.max(0, e.connections - 1),
  };
}

/** Median over the plan's runs of one (target, rate). */
async function medianStep(target: Target, rate: number, seconds = plan.seconds, options: StepOptions = {}, label = describeTarget[target]): Promise<StepResult> {
  const runs: StepResult[] = [];
  for (let i = 0; i < plan.runs; i++) runs.push(await step(target, rate, seconds, options));
  const pick = (f: (r: StepResult) => number | null) => median(runs.map((r) => f(r) ?? Number.NaN));
  const r: StepResult = {
    rate,
    cyclesPerS: pick((x) => x.cyclesPerS),
    sustained: runs.filter((x) => x.sustained).length * 2 > runs.length,
    decisionP50: pick((x) => x.decisionP50),
    decisionP99: pick((x) => x.decisionP99),
    wakeP50: pick((x) => x.wakeP50),
    wakeP99: pick((x) => x.wakeP99),
    rssMb: Math.max(...runs.map((x) => x.rssMb)),
    cpuUsPerCycle: {
      target: median(runs.map((x) => x.cpuUsPerCycle.target)),
      emulator: median(runs.map((x) => x.cpuUsPerCycle.emulator)),
      client: median(runs.map((x) => x.cpuUsPerCycle.client)),
    },
    lost: runs.reduce((s, x) => s + x.lost, 0),
    duplicated: runs.reduce((s, x) => s + x.duplicated, 0),
    recirculated: pick((x) => x.recirculated),
    rejected: pick((x) => x.rejected),
    late: pick((x) => x.late),
    statusP99Ms: runs.some((x) => x.statusP99Ms !== null) ? pick((x) => x.statusP99Ms) : null,
    reconnects: Math.max(...runs.map((x) => x.reconnects)),
  };
  log(`  ${label.padEnd(40)} rate ${String(rate).padStart(5)}/s  cycles ${r.cyclesPerS.toFixed(0).padStart(5)}/s  ${r.sustained ? 'sustained' : 'BROKE DOWN'}  decision p99 ${r.decisionP99} ms  wake p99 ${r.wakeP99} ms  rss ${r.rssMb} MB  cpu µs/cycle ${r.cpuUsPerCycle.target}/${r.cpuUsPerCycle.emulator}/${r.cpuUsPerCycle.client}  late ${r.late}  rejected ${r.rejected}  lost ${r.lost}  dup ${r.duplicated}${r.statusP99Ms !== null ? `  status p99 ${r.statusP99Ms} ms  reconnects ${r.reconnects}` : ''}`);
  return r;
}

/** Pop latency (head + remove, one transaction) on a queue of `rows` messages; median µs. */
function popMicros(rows: number): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pop-'));
  const db = openDatabase(path.join(dir, 'q.db'), { synchronous: 'NORMAL' });
  const store = createQueueStore(db);
  const m = (n: number): InductDto => ({ Type: 'REQUEST', TrackID: String(n).padStart(10, '0'), Barcode: '4006381333931', MessageCode: 210, InductLocation: 'IND01', RecirculationCount: 0, Length: 320.5, Width: 210, Height: 95, Weight: 1.25 });
  const batch = 10_000;
  for (let i = 0; i < rows; i += batch) store.enqueue(Array.from({ length: Math.min(batch, rows - i) }, (_, k) => m(i + k)), new Date().toISOString());
  const samples: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now();
    const head = store.head('sortation', []);
    store.remove(head!, { deliveredAt: 'T', clientAddress: null });
    samples.push((performance.now() - t0) * 1000);
  }
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return median(samples);
}

/** Seed a `rows`-row CSV in a child process; its time and peak memory. */
async function seedProbe(rows: number): Promise<{ seconds: number; maxRssMb: number; rows: number }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-seed-'));
  const out = fs.createWriteStream(path.join(home, 'Service_PLC.csv'));
  out.write(`${CSV_COLUMNS.join(',')}\n`);
  for (let i = 0; i < rows; i++) {
    const line = i % 10 === 9 ? `SCAN,211,D${String(i % 50).padStart(3, '0')},,,,,,,,Ready,Off,Off,,NONE\n` : `REQUEST,210,IND01,${String(i).padStart(10, '0')},4006381333931,320.5,210,95,1.25,0,,,,,\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  const { value } = await start(dist('bench/seed-probe.js'), [home], {}, (l) => (l.startsWith('{') ? JSON.parse(l) : undefined));
  fs.rmSync(home, { recursive: true, force: true });
  return value;
}

async function main() {
  const started = Date.now();
  log(`bench (${quick ? 'quick' : 'full'}): ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.cpus()[0]?.model}, node ${process.version}`);
  if (fsyncDelayMs > 0) log(`every fsync of the service targets ${fsyncDelayMs} ms slower (--fsync-delay-ms)`);
  if (serviceRoot !== projectRoot) log(`service from ${serviceRoot} (--service-root)`);
  const results: Record<string, { ramp: StepResult[]; max: number; at50: StepResult; atMax?: StepResult; brokeDown: boolean }> = {};
  for (const target of plan.targets) {
    log(`${describeTarget[target]}:`);
    const options = { fsyncDelayMs: target === 'baseline' ? 0 : fsyncDelayMs };
    const at50 = await medianStep(target, 50, plan.seconds, options);
    const ramp: StepResult[] = [];
    const rates = [...plan.rates];
    for (let i = 0; i < rates.length; i++) {
      const r = await medianStep(target, rates[i], plan.seconds, options);
      ramp.push(r);
      if (!r.sustained) break;
      // The baseline's ramp goes on until it breaks down too, so that the throughput ratio is
      // a measurement, not an upper bound (full runs; the quick one is a smoke test).
      if (target === 'baseline' && !quick && i === rates.length - 1 && rates[i] < 20_000) rates.push(Math.round((rates[i] * 1.5) / 500) * 500);
    }
    const sustained = ramp.filter((r) => r.sustained);
    const best = sustained.length > 0 ? sustained[sustained.length - 1] : undefined;
    results[target] = { ramp, at50, max: best ? best.cyclesPerS : 0, atMax: best, brokeDown: ramp.some((r) => !r.sustained) };
  }

  // Slow storage (docs/performance.md): an SD card (+20 ms a sync) at a fast sorter's 50 items/s,
  // the throughput of consumer SSDs and eMMC (+5 ms), and an operator's 10 s write lock.
  let slow20: StepResult | undefined;
  let slow5 = { max: null as number | null, ramp: [] as StepResult[] };
  let lock: StepResult | undefined;
  if (storageSteps) {
    log('storage:');
    slow20 = await medianStep('service', 50, quick ? 5 : 10, { fsyncDelayMs: 20 }, 'service, fsync +20 ms');
    if (!quick) {
      for (const rate of [250, 500, 750, 1000, 1250, 1500, 2000, 2500]) {
        const r = await medianStep('service', rate, plan.seconds, { fsyncDelayMs: 5 }, 'service, fsync +5 ms');
        slow5.ramp.push(r);
        if (!r.sustained) break;
      }
      const ok = slow5.ramp.filter((r) => r.sustained);
      slow5 = { ...slow5, max: ok.length > 0 ? Math.round(ok[ok.length - 1].cyclesPerS) : 0 };
      lock = await medianStep('service', 50, 20, { lock: { afterS: 5, forS: 10 } }, 'service, 10 s write lock');
    }
  }
  let popEmpty = Number.NaN;
  let popFull = Number.NaN;
  let seed = { seconds: Number.NaN, maxRssMb: Number.NaN, rows: 0 };
  if (scale) {
    log('scale:');
    popEmpty = popMicros(2000);
    popFull = popMicros(plan.scaleRows);
    log(`  pop median ${popEmpty.toFixed(1)} µs at 2,000 queued; ${popFull.toFixed(1)} µs at ${plan.scaleRows.toLocaleString('en')} queued`);
    seed = await seedProbe(plan.scaleRows);
    log(`  seeding ${seed.rows.toLocaleString('en')} CSV rows: ${seed.seconds.toFixed(1)} s, peak RSS ${seed.maxRssMb.toFixed(0)} MB`);
  }

  const base = results.baseline;
  const svc = results.service;
  const all = [...Object.values(results).flatMap((r) => [r.at50, ...r.ramp]), ...(slow20 ? [slow20] : []), ...slow5.ramp, ...(lock ? [lock] : [])];
  const lost = all.reduce((s, r) => s + r.lost, 0);
  const duplicated = all.reduce((s, r) => s + r.duplicated, 0);
  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a != null && b != null && b !== 0 ? Math.round((a / b) * 100) / 100 : null);

  console.log('\n| target | max sustained cycles/s | decision p50/p99 ms @50/s | wake p50/p99 ms @50/s | decision p99 ms @max | CPU µs/cycle @max (target/emulator/client) | peak RSS MB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [target, r] of Object.entries(results)) {
    console.log(`| ${describeTarget[target as Target]} | ${r.max.toFixed(0)} | ${r.at50.decisionP50} / ${r.at50.decisionP99} | ${r.at50.wakeP50} / ${r.at50.wakeP99} | ${r.atMax?.decisionP99 ?? '-'} | ${r.atMax ? `${r.atMax.cpuUsPerCycle.target} / ${r.atMax.cpuUsPerCycle.emulator} / ${r.atMax.cpuUsPerCycle.client}` : '-'} | ${Math.max(...[r.at50, ...r.ramp].map((x) => x.rssMb))} |`);
  }
  if (slow20) {
    console.log(`\nslow storage: fsync +20 ms at 50/s: decision p50/p99 ${slow20.decisionP50} / ${slow20.decisionP99} ms, late ${slow20.late}, rejected ${slow20.rejected}`);
    if (slow5.max !== null) console.log(`fsync +5 ms: max sustained ${slow5.max} cycles/s`);
    if (lock) console.log(`10 s write lock at 50/s: /status p99 ${lock.statusP99Ms} ms, reconnects ${lock.reconnects}, late ${lock.late}, rejected ${lock.rejected}`);
  }
  console.log(`\nservice vs baseline: throughput ${ratio(svc.max, base.max)}x${base.brokeDown ? '' : ' (the baseline did not break down: an upper bound)'}, wake p99 ${ratio(svc.at50.wakeP99, base.at50.wakeP99)}x, decision p99 @50/s +${svc.at50.decisionP99 != null && base.at50.decisionP99 != null ? (svc.at50.decisionP99 - base.at50.decisionP99).toFixed(2) : '?'} ms`);
  console.log(`pop at ${plan.scaleRows.toLocaleString('en')} queued vs ~empty: ${ratio(popFull, popEmpty)}x; seeding ${seed.rows.toLocaleString('en')} rows ${seed.seconds.toFixed(1)} s (peak ${seed.maxRssMb.toFixed(0)} MB)`);
  console.log(`correctness: lost ${lost}, duplicated ${duplicated}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const bench = {
    quick,
    items_per_s: Math.round(svc.max),
    baseline_items_per_s: Math.round(base.max),
    wake_p50_ms: svc.at50.wakeP50,
    wake_p99_ms: svc.at50.wakeP99,
    baseline_wake_p99_ms: base.at50.wakeP99,
    decision_p99_ms_at_50: svc.at50.decisionP99,
    baseline_decision_p99_ms_at_50: base.at50.decisionP99,
    decision_p99_ms_at_max: svc.atMax?.decisionP99 ?? null,
    pop_1m_vs_empty: ratio(popFull, popEmpty),
    pop_rows: plan.scaleRows,
    seed_1m_s: Math.round(seed.seconds * 100) / 100,
    seed_rows: seed.rows,
    seed_peak_rss_mb: Math.round(seed.maxRssMb),
    rss_mb: Math.max(...[svc.at50, ...svc.ramp].map((x) => x.rssMb)),
    lost,
    duplicated,
    durability: 'FULL+group-commit',
    fsync_delay_ms: fsyncDelayMs,
    slow_disk_decision_p99_ms: slow20?.decisionP99 ?? null,
    slow_disk_decision_p50_ms: slow20?.decisionP50 ?? null,
    slow_disk_late: slow20?.late ?? null,
    slow_disk_rejected: slow20?.rejected ?? null,
    slow_disk_items_per_s: slow5.max,
    lock_status_p99_ms: lock?.statusP99Ms ?? null,
    lock_reconnects: lock?.reconnects ?? null,
    lock_late: lock?.late ?? null,
    baseline_broke_down: base.brokeDown,
    modes: Object.fromEntries(Object.entries(results).map(([k, r]) => [k, { items_per_s: Math.round(r.max), wake_p99_ms: r.at50.wakeP99, decision_p99_ms_at_50: r.at50.decisionP99, decision_p99_ms_at_max: r.atMax?.decisionP99 ?? null, cpu_us_per_cycle_at_max: r.atMax?.cpuUsPerCycle.target ?? null }])),
  };
  console.log(`BENCH ${JSON.stringify(bench)}`);
  if (lost !== 0 || duplicated !== 0) {
    console.error(`bench: FAILED correctness: ${lost} lost, ${duplicated} duplicated`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err.stack ?? err}`);
  process.exit(1);
});
