/**
 * `npm run bench [-- --quick]`: the project's benchmark (docs/performance.md). Drives the sorter
 * emulator with reference-client loops against the service and against a minimal baseline
 * (bench/baseline.ts), each figure the median of several runs, and checks in every run that
 * nothing was lost or duplicated. Prints a table and, last, one line `BENCH {json}`.
 * Here: the plan (quick or full, and the flags that override it), the steps in order, the report.
 */
import os from 'node:os';
import path from 'node:path';
import { commandLine, nonNegative } from '../lib/process/command-line';
import { projectRoot } from '../lib/process/paths';
import { type Target, allTargets, describeTarget, parseServiceConfig } from './processes';
import { type PurgeWay, popMicros, purgeProbe, seedProbe } from './scale';
import { type StepResult, medianStep } from './step';

const args = commandLine('bench', 'npm run bench -- [options]   (docs/performance.md)', {
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
  'site-rate': { type: 'string' },
  'service-config': { type: 'string' },
});
const quick = args.quick!;
const plan = quick
  ? { runs: 1, seconds: 3, rates: [300, 1000], targets: ['baseline', 'service'] as Target[], scaleRows: 100_000, clientLoops: 8 }
  : { runs: 3, seconds: 8, rates: [200, 500, 1000, 1500, 2000, 2500, 3000], targets: ['baseline', 'service', 'service-normal', 'service-nogroup'] as Target[], scaleRows: 1_000_000, clientLoops: 8 };
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
const fsyncDelayMs = nonNegative('bench', 'fsync-delay-ms', args['fsync-delay-ms']);
/** Another checkout's build to run as the service (before/after comparisons); this one by default. */
const serviceRoot = path.resolve(args['service-root'] ?? projectRoot);
/** Folder for `node --cpu-prof` profiles of the service (one per run), if asked for. */
const cpuProfDir = args['cpu-prof'];
/** A site's items a second around the clock: the service also runs a step at it, and its storage's wear is projected. */
const siteRate = args['site-rate'] !== undefined ? nonNegative('bench', 'site-rate', args['site-rate']) : null;
if (siteRate === 0) {
  console.error('bench: --site-rate takes a positive number of items a second');
  process.exit(2);
}

/** Settings for the service's config.json, as JSON (e.g. '{"CommitWindowMs":30}'): what a site would change. */
const serviceConfig = parseServiceConfig('bench', args['service-config']);

/** The storage the projection is for: a 32 GB industrial eMMC rated for 100 TB written (its data sheet's TBW). */
const EMMC = { label: '32 GB eMMC rated 100 TB written', ratedBytes: 100e12 };

/** What `perItem` (KB an item) comes to in a day at `rate` items/s around the clock, GB (10^9 bytes, as TBW ratings count). */
const gbPerDay = (kbPerItem: number | null, rate: number) => (kbPerItem === null || Number.isNaN(kbPerItem) ? null : Math.round(((kbPerItem * 1024 * rate * 86_400) / 1e9) * 10) / 10);
/** Years until `ratedBytes` are written at `gb` a day. */
const yearsOfLife = (gb: number | null, ratedBytes: number) => (gb === null || gb === 0 ? null : Math.round((ratedBytes / (gb * 1e9) / 365.25) * 10) / 10);

const log = (line: string) => process.stderr.write(`${line}\n`);

const ctx = { runs: plan.runs, clientLoops: plan.clientLoops, serviceRoot, cpuProfDir, serviceConfig, log };

async function main() {
  const started = Date.now();
  log(`bench (${quick ? 'quick' : 'full'}): ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.cpus()[0]?.model}, node ${process.version}`);
  if (fsyncDelayMs > 0) log(`every fsync of the service targets ${fsyncDelayMs} ms slower (--fsync-delay-ms)`);
  if (serviceConfig) log(`the service targets run with ${JSON.stringify(serviceConfig)} in their config.json (--service-config)`);
  if (serviceRoot !== projectRoot) log(`service from ${serviceRoot} (--service-root)`);
  const results: Record<string, { ramp: StepResult[]; max: number; at50: StepResult; atMax?: StepResult; brokeDown: boolean }> = {};
  for (const target of plan.targets) {
    log(`${describeTarget[target]}:`);
    const options = { fsyncDelayMs: target === 'baseline' ? 0 : fsyncDelayMs };
    const at50 = await medianStep(ctx, target, 50, plan.seconds, options);
    const ramp: StepResult[] = [];
    const rates = [...plan.rates];
    for (let i = 0; i < rates.length; i++) {
      const r = await medianStep(ctx, target, rates[i], plan.seconds, options);
      ramp.push(r);
      if (!r.sustained) break;
      // The baseline's ramp goes on until it breaks down too, so that the throughput ratio is
      // a measurement, not an upper bound (full runs; the quick one is a smoke test).
      if (target === 'baseline' && !quick && i === rates.length - 1 && rates[i] < 20_000) rates.push(Math.max(Math.round((rates[i] * 1.5) / 500) * 500, Math.ceil(rates[i] * 1.5)));
    }
    const sustained = ramp.filter((r) => r.sustained);
    const best = sustained.length > 0 ? sustained[sustained.length - 1] : undefined;
    results[target] = { ramp, at50, max: best ? best.cyclesPerS : 0, atMax: best, brokeDown: ramp.some((r) => !r.sustained) };
  }

  // A site's own rate: what its storage sees in a day, and how long the eMMC lasts at that.
  let site: StepResult | undefined;
  if (siteRate !== null) {
    log('site:');
    site = siteRate === 50 ? results.service.at50 : await medianStep(ctx, 'service', siteRate, plan.seconds, { fsyncDelayMs }, `service at the site rate`);
  }

  // Slow storage (docs/performance.md): an SD card (+20 ms a sync) at a fast sorter's 50 items/s,
  // the throughput of consumer SSDs and eMMC (+5 ms), and an operator's 10 s write lock.
  let slow20: StepResult | undefined;
  let slow5 = { max: null as number | null, ramp: [] as StepResult[] };
  let lock: StepResult | undefined;
  if (storageSteps) {
    log('storage:');
    slow20 = await medianStep(ctx, 'service', 50, quick ? 5 : 10, { fsyncDelayMs: 20 }, 'service, fsync +20 ms');
    if (!quick) {
      for (const rate of [250, 500, 750, 1000, 1250, 1500, 2000, 2500]) {
        const r = await medianStep(ctx, 'service', rate, plan.seconds, { fsyncDelayMs: 5 }, 'service, fsync +5 ms');
        slow5.ramp.push(r);
        if (!r.sustained) break;
      }
      const ok = slow5.ramp.filter((r) => r.sustained);
      slow5 = { ...slow5, max: ok.length > 0 ? Math.round(ok[ok.length - 1].cyclesPerS) : 0 };
      lock = await medianStep(ctx, 'service', 50, 20, { lock: { afterS: 5, forS: 10 } }, 'service, 10 s write lock');
    }
  }
  // The hourly history purge while the sorter's messages arrive (docs/performance.md, "The
  // hourly purge"): on an SD card in the full run, on this disk in the quick one.
  let purge: { rows: number; fsyncDelayMs: number; one: PurgeWay; chunks: PurgeWay } | undefined;
  if (storageSteps) {
    const [hours, purgeHours, delay] = quick ? [2, 1, 0] : [4, 3, 20];
    purge = { ...(await purgeProbe(hours, purgeHours, delay)), fsyncDelayMs: delay };
    log(`  history purge of ${purge.chunks.purged.toLocaleString('en')} rows (fsync +${delay} ms), a message's commit p99/max: one transaction ${purge.one.commitP99Ms} / ${purge.one.commitMaxMs} ms, chunks ${purge.chunks.commitP99Ms} / ${purge.chunks.commitMaxMs} ms (${purge.chunks.seconds} s)`);
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
  const all = [...Object.values(results).flatMap((r) => [r.at50, ...r.ramp]), ...(site && siteRate !== 50 ? [site] : []), ...(slow20 ? [slow20] : []), ...slow5.ramp, ...(lock ? [lock] : [])];
  const purgeWays = purge ? [purge.one, purge.chunks] : [];
  const lost = all.reduce((s, r) => s + r.lost, 0) + purgeWays.reduce((s, w) => s + w.lost, 0);
  const duplicated = all.reduce((s, r) => s + r.duplicated, 0) + purgeWays.reduce((s, w) => s + w.duplicated, 0);
  // Purged: exactly what was older than the cutoff, the same both ways.
  const purgeWrong = purgeWays.some((w) => w.olderLeft !== 0 || w.purged !== purge!.one.purged || w.kept !== purge!.rows - purge!.one.purged);
  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a != null && b != null && b !== 0 ? Math.round((a / b) * 100) / 100 : null);

  console.log('\n| target | max sustained cycles/s | decision p50/p99 ms @50/s | wake p50/p99 ms @50/s | decision p99 ms @max | CPU µs/cycle @max (target/emulator/client) | disk KB/cycle @50/s (process / device) | device writes/cycle @50/s | syncs/cycle @50/s | peak RSS MB |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [target, r] of Object.entries(results)) {
    console.log(`| ${describeTarget[target as Target]} | ${r.max.toFixed(0)} | ${r.at50.decisionP50} / ${r.at50.decisionP99} | ${r.at50.wakeP50} / ${r.at50.wakeP99} | ${r.atMax?.decisionP99 ?? '-'} | ${r.atMax ? `${r.atMax.cpuUsPerCycle.target} / ${r.atMax.cpuUsPerCycle.emulator} / ${r.atMax.cpuUsPerCycle.client}` : '-'} | ${r.at50.diskKbPerCycle} / ${r.at50.deviceKbPerCycle ?? '-'} | ${r.at50.deviceWritesPerCycle ?? '-'} | ${r.at50.syncsPerCycle ?? '-'} | ${Math.max(...[r.at50, ...r.ramp].map((x) => x.rssMb))} |`);
  }
  const siteProcessGb = site && siteRate !== null ? gbPerDay(site.diskKbPerCycle, siteRate) : null;
  const siteDeviceGb = site && siteRate !== null ? gbPerDay(site.deviceKbPerCycle, siteRate) : null;
  const siteYears = yearsOfLife(siteDeviceGb ?? siteProcessGb, EMMC.ratedBytes);
  const siteYearsByProcess = yearsOfLife(siteProcessGb, EMMC.ratedBytes);
  if (site && siteRate !== null) {
    console.log(`\nsite at ${siteRate} items/s around the clock: ${site.diskKbPerCycle} KB/item from the process, ${site.deviceKbPerCycle ?? '-'} KB and ${site.deviceWritesPerCycle ?? '-'} writes/item at the device, ${site.syncsPerCycle} syncs/item: ${siteProcessGb} GB a day from the process, ${siteDeviceGb ?? '-'} GB at the device; a ${EMMC.label} lasts about ${siteYears} years by the device's figure, ${siteYearsByProcess} by the process's (its own write amplification not counted; the device's figure counts every process writing to that disk)`);
  }
  if (slow20) {
    console.log(`\nslow storage: fsync +20 ms at 50/s: decision p50/p99 ${slow20.decisionP50} / ${slow20.decisionP99} ms, late ${slow20.late}, rejected ${slow20.rejected}`);
    if (slow5.max !== null) console.log(`fsync +5 ms: max sustained ${slow5.max} cycles/s`);
    if (lock) console.log(`10 s write lock at 50/s: /status p99 ${lock.statusP99Ms} ms, reconnects ${lock.reconnects}, late ${lock.late}, rejected ${lock.rejected}`);
  }
  if (purge) {
    const { one, chunks } = purge;
    console.log(`history purge, ${chunks.purged.toLocaleString('en')} rows, fsync +${purge.fsyncDelayMs} ms: a sorter message's commit p50/p99/max ${chunks.commitP50Ms} / ${chunks.commitP99Ms} / ${chunks.commitMaxMs} ms in chunks (${chunks.seconds} s; ${chunks.commitP99BeforeMs} ms p99 before), ${one.commitP50Ms} / ${one.commitP99Ms} / ${one.commitMaxMs} ms as one transaction (${one.seconds} s): max ${ratio(one.commitMaxMs, chunks.commitMaxMs)}x lower`);
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
    disk_kb_per_item_at_50: svc.at50.diskKbPerCycle,
    device_kb_per_item_at_50: svc.at50.deviceKbPerCycle,
    device_writes_per_item_at_50: svc.at50.deviceWritesPerCycle,
    syncs_per_item_at_50: svc.at50.syncsPerCycle,
    site_rate: siteRate,
    site_disk_kb_per_item: site?.diskKbPerCycle ?? null,
    site_device_kb_per_item: site?.deviceKbPerCycle ?? null,
    site_device_writes_per_item: site?.deviceWritesPerCycle ?? null,
    site_syncs_per_item: site?.syncsPerCycle ?? null,
    site_decision_p99_ms: site?.decisionP99 ?? null,
    site_process_gb_per_day: siteProcessGb,
    site_device_gb_per_day: siteDeviceGb,
    site_emmc_32gb_100tbw_years: siteYears,
    site_emmc_32gb_100tbw_years_by_process: siteYearsByProcess,
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
    service_config: serviceConfig ?? null,
    slow_disk_decision_p99_ms: slow20?.decisionP99 ?? null,
    slow_disk_decision_p50_ms: slow20?.decisionP50 ?? null,
    slow_disk_late: slow20?.late ?? null,
    slow_disk_disk_kb_per_item: slow20?.diskKbPerCycle ?? null,
    slow_disk_device_kb_per_item: slow20?.deviceKbPerCycle ?? null,
    slow_disk_syncs_per_item: slow20?.syncsPerCycle ?? null,
    slow_disk_rejected: slow20?.rejected ?? null,
    slow_disk_items_per_s: slow5.max,
    lock_status_p99_ms: lock?.statusP99Ms ?? null,
    lock_reconnects: lock?.reconnects ?? null,
    lock_late: lock?.late ?? null,
    purge_rows: purge?.chunks.purged ?? null,
    purge_fsync_delay_ms: purge?.fsyncDelayMs ?? null,
    purge_seconds: purge?.chunks.seconds ?? null,
    purge_commit_p99_before_ms: purge?.chunks.commitP99BeforeMs ?? null,
    purge_commit_p99_ms: purge?.chunks.commitP99Ms ?? null,
    purge_commit_max_ms: purge?.chunks.commitMaxMs ?? null,
    purge_one_transaction_commit_p99_ms: purge?.one.commitP99Ms ?? null,
    purge_one_transaction_commit_max_ms: purge?.one.commitMaxMs ?? null,
    baseline_broke_down: base.brokeDown,
    modes: Object.fromEntries(Object.entries(results).map(([k, r]) => [k, { items_per_s: Math.round(r.max), wake_p99_ms: r.at50.wakeP99, decision_p99_ms_at_50: r.at50.decisionP99, decision_p99_ms_at_max: r.atMax?.decisionP99 ?? null, cpu_us_per_cycle_at_max: r.atMax?.cpuUsPerCycle.target ?? null, disk_kb_per_item_at_50: r.at50.diskKbPerCycle, device_kb_per_item_at_50: r.at50.deviceKbPerCycle, device_writes_per_item_at_50: r.at50.deviceWritesPerCycle, syncs_per_item_at_50: r.at50.syncsPerCycle, cpu_us_per_cycle_at_50: r.at50.cpuUsPerCycle.target }])),
  };
  console.log(`BENCH ${JSON.stringify(bench)}`);
  if (lost !== 0 || duplicated !== 0 || purgeWrong) {
    console.error(`bench: FAILED correctness: ${lost} lost, ${duplicated} duplicated${purgeWrong ? '; the history purge did not remove exactly the rows older than its cutoff' : ''}`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err.stack ?? err}`);
  process.exit(1);
});
