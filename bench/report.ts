// The benchmark's report (npm run bench, docs/performance.md): what one run measured, printed as a
// table and summary lines, and the `BENCH {json}` line; the correctness check over every step.
import { type CpuPairs, cpuPairFields, spreadText } from './cpu-pairs';
import { type HistorySize, describeHistorySize } from './history-size';
import type { IdleResult } from './idle';
import { collectorOf } from '../lib/process/collector';
import { type Target, describeTarget } from './processes';
import type { CountCost, PurgeWay } from './scale';
import type { SyncStall } from './slow-disk';
import type { StepResult } from './step';

/** One target's figures: at 50 items/s, and its ramp up to the first rate it did not sustain. */
export interface TargetResult {
  ramp: StepResult[];
  max: number;
  at50: StepResult;
  atMax?: StepResult;
  brokeDown: boolean;
}
/** Slow storage: an SD card at 50 items/s, its stalls, the ramp with every sync 5 ms slower, a 10 s write lock. */
export interface StorageResult {
  slow20?: StepResult;
  /** 50 items/s with a sync stall every few seconds (`stallOf` the setting). */
  stall?: StepResult;
  stallOf?: SyncStall;
  slow5: { max: number | null; ramp: StepResult[] };
  lock?: StepResult;
}
export type PurgeResult = { rows: number; fsyncDelayMs: number; one: PurgeWay; chunks: PurgeWay; size?: PurgeWay };
export interface ScaleResult {
  popEmpty: number;
  popFull: number;
  seed: { seconds: number; maxRssMb: number; rows: number };
  /** Counting the full queue (null: `--no-scale`). */
  count: CountCost | null;
}
/** Everything one run measured. */
export interface Measured {
  /** Per target; the baseline and the service are always measured (bench/run.ts checks `--targets`). */
  results: Record<string, TargetResult> & { baseline: TargetResult; service: TargetResult };
  site?: StepResult;
  /** The site's history a day and the days that fit on its cards (--site-rate). */
  history?: HistorySize;
  storage: StorageResult;
  purge?: PurgeResult;
  scale: ScaleResult;
  /** The service idle, its sorter connected and a WCS waiting (null: `--no-idle`). */
  idle?: IdleResult;
  /** The service for minutes from its start, its memory read every minute (`--memory-minutes`). */
  memory?: StepResult;
  /** The CPU ratio against the baseline in side-by-side pairs, per rate (`--cpu-pairs`). */
  cpuPairs?: CpuPairs[];
}

/** What the report needs of the run's plan and flags. */
export interface ReportContext {
  quick: boolean;
  scaleRows: number;
  siteRate: number | null;
  fsyncDelayMs: number;
  serviceConfig: Record<string, unknown> | undefined;
  /** Seconds of traffic before each step's measurements (--warmup-s). */
  warmupS?: number;
  /** Minutes of the memory step (--memory-minutes; 0 or absent: none). */
  memoryMinutes?: number;
  /** The main plan's sync stalls (--sync-stall), or null. */
  syncStall?: SyncStall | null;
  /** The service's share of one core (--service-cpu) in effect, or null; and why not where it was asked for and could not be. */
  serviceCpuPct?: number | null;
  serviceCpuSkipped?: string | null;
  /** The telegram layout of the service's steps (--layout; v1 if absent). */
  layout?: string;
  /** Node's options for the service (--service-node-args); absent: its launcher chose them, as in the units. */
  serviceNodeArgs?: readonly string[];
}

/** The storage the projection is for: a 32 GB industrial eMMC rated for 100 TB written (its data sheet's TBW). */
const EMMC = { label: '32 GB eMMC rated 100 TB written', ratedBytes: 100e12 };

/** What `perItem` (KB an item) comes to in a day at `rate` items/s around the clock, GB (10^9 bytes, as TBW ratings count). */
const gbPerDay = (kbPerItem: number | null, rate: number) =>
  kbPerItem === null || Number.isNaN(kbPerItem) ? null : Math.round(((kbPerItem * 1024 * rate * 86_400) / 1e9) * 10) / 10;
/** Years until `ratedBytes` are written at `gb` a day. */
const yearsOfLife = (gb: number | null, ratedBytes: number) =>
  gb === null || gb === 0 ? null : Math.round((ratedBytes / (gb * 1e9) / 365.25) * 10) / 10;

/**
 * Items lost and duplicated in every step, and whether the purge removed exactly what was older
 * than its cutoff. The baseline keeps its queues in memory and promises nothing once overrun: the
 * items still in it when a step it broke down in ends are counted apart (`baselineOverrun`), not
 * as lost. In a step it sustained, a loss of the baseline's is the harness's own and counts.
 */
export function correctness({ results, site, storage, purge, memory, cpuPairs }: Measured, siteRate: number | null) {
  const overrun = results.baseline.ramp.filter((r) => !r.sustained);
  const all = [
    ...Object.values(results)
      .flatMap((r) => [r.at50, ...r.ramp])
      .filter((x) => !overrun.includes(x)),
    ...(site && siteRate !== 50 ? [site] : []),
    ...(storage.slow20 ? [storage.slow20] : []),
    ...(storage.stall ? [storage.stall] : []),
    ...storage.slow5.ramp,
    ...(storage.lock ? [storage.lock] : []),
    ...(memory ? [memory] : []),
    ...(cpuPairs ?? []).flatMap((p) => p.steps),
  ];
  const purgeWays = purge ? [purge.one, purge.chunks] : [];
  // The size bound's cut finds its own cutoff: nothing older than it left, and the rows it took are gone.
  const size = purge?.size ? [purge.size] : [];
  const lost = all.reduce((s, r) => s + r.lost, 0) + [...purgeWays, ...size].reduce((s, w) => s + w.lost, 0);
  const duplicated = all.reduce((s, r) => s + r.duplicated, 0) + [...purgeWays, ...size].reduce((s, w) => s + w.duplicated, 0);
  const purgeWrong =
    purge !== undefined &&
    (purgeWays.some((w) => w.olderLeft !== 0 || w.purged !== purge.one.purged || w.kept !== purge.rows - purge.one.purged) ||
      size.some((w) => w.olderLeft !== 0 || w.purged === 0 || w.kept !== purge.rows - w.purged));
  const baselineOverrun = overrun.reduce((n, r) => n + r.lost, 0);
  return { lost, duplicated, purgeWrong, baselineOverrun };
}

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a != null && b != null && b !== 0 ? Math.round((a / b) * 100) / 100 : null;

/** What a site's storage sees in a day at its rate, and how long the eMMC lasts at that. */
function siteWear(site: StepResult | undefined, siteRate: number | null) {
  const processGb = site && siteRate !== null ? gbPerDay(site.diskKbPerCycle, siteRate) : null;
  const deviceGb = site && siteRate !== null ? gbPerDay(site.deviceKbPerCycle, siteRate) : null;
  return {
    processGb,
    deviceGb,
    years: yearsOfLife(deviceGb ?? processGb, EMMC.ratedBytes),
    yearsByProcess: yearsOfLife(processGb, EMMC.ratedBytes),
  };
}

/** The storage steps' lines: a slow disk, a stalling one, an operator's lock. */
function printStorage(storage: Measured['storage']): void {
  const { slow20, stall, stallOf, slow5, lock } = storage;
  if (slow20) {
    console.log(
      `\nslow storage: fsync +20 ms at 50/s: decision p50/p99 ${slow20.decisionP50} / ${slow20.decisionP99} ms, late ${slow20.late}, rejected ${slow20.rejected}`,
    );
    if (stall && stallOf)
      console.log(
        `a ${stallOf.ms} ms sync stall every ${stallOf.everyS} s at 50/s (${stall.stalls ?? '-'} stalls): decision p50/p99/max ${stall.decisionP50} / ${stall.decisionP99} / ${stall.decisionMax} ms, late ${stall.late}, passes without assignment ${stall.passesWithoutAssignment}, rejected ${stall.rejected}, lost ${stall.lost}, duplicated ${stall.duplicated}`,
      );
    if (slow5.max !== null) console.log(`fsync +5 ms: max sustained ${slow5.max} cycles/s`);
    if (lock)
      console.log(
        `10 s write lock at 50/s: /status p99 ${lock.statusP99Ms} ms, reconnects ${lock.reconnects}, late ${lock.late}, rejected ${lock.rejected}`,
      );
  }
}

/** The purge probe's lines: in chunks, as one transaction, and the size bound's cut. */
function printPurge(purge: Measured['purge']): void {
  if (purge) {
    const { one, chunks } = purge;
    console.log(
      `history purge, ${chunks.purged.toLocaleString('en')} rows, fsync +${purge.fsyncDelayMs} ms: a sorter message's commit p50/p99/max ${chunks.commitP50Ms} / ${chunks.commitP99Ms} / ${chunks.commitMaxMs} ms in chunks (${chunks.seconds} s; ${chunks.commitP99BeforeMs} ms p99 before), ${one.commitP50Ms} / ${one.commitP99Ms} / ${one.commitMaxMs} ms as one transaction (${one.seconds} s): max ${ratio(one.commitMaxMs, chunks.commitMaxMs)}x lower`,
    );
    const size = purge.size;
    if (size)
      console.log(
        `the size bound's cut of ${size.purged.toLocaleString('en')} rows: a sorter message's commit p50/p99/max ${size.commitP50Ms} / ${size.commitP99Ms} / ${size.commitMaxMs} ms (${size.seconds} s; ${size.commitP99BeforeMs} ms p99 before)`,
      );
  }
}

/** The table per target and the summary lines, on stdout. */
export function printReport(m: Measured, c: ReportContext, started: number): void {
  const { results, site, storage, purge, scale: sc } = m;
  const { siteRate } = c;
  console.log(
    '\n| target | max sustained cycles/s | decision p50/p99 ms @50/s | wake p50/p99 ms @50/s | decision p99 ms @max | CPU µs/cycle @max (target/emulator/client) | disk KB/cycle @50/s (process / device) | device writes/cycle @50/s | syncs/cycle @50/s | peak RSS MB |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [target, r] of Object.entries(results)) {
    console.log(
      `| ${describeTarget[target as Target]} | ${r.max.toFixed(0)} | ${r.at50.decisionP50} / ${r.at50.decisionP99} | ${r.at50.wakeP50} / ${r.at50.wakeP99} | ${r.atMax?.decisionP99 ?? '-'} | ${r.atMax ? `${r.atMax.cpuUsPerCycle.target} / ${r.atMax.cpuUsPerCycle.emulator} / ${r.atMax.cpuUsPerCycle.client}` : '-'} | ${r.at50.diskKbPerCycle} / ${r.at50.deviceKbPerCycle ?? '-'} | ${r.at50.deviceWritesPerCycle ?? '-'} | ${r.at50.syncsPerCycle ?? '-'} | ${Math.max(...[r.at50, ...r.ramp].map((x) => x.rssMb))} |`,
    );
  }
  const wear = siteWear(site, siteRate);
  if (site && siteRate !== null) {
    console.log(
      `\nsite at ${siteRate} items/s around the clock: ${site.diskKbPerCycle} KB/item from the process, ${site.deviceKbPerCycle ?? '-'} KB and ${site.deviceWritesPerCycle ?? '-'} writes/item at the device, ${site.syncsPerCycle} syncs/item: ${wear.processGb} GB a day from the process, ${wear.deviceGb ?? '-'} GB at the device; a ${EMMC.label} lasts about ${wear.years} years by the device's figure, ${wear.yearsByProcess} by the process's (its own write amplification not counted; the device's figure counts every process writing to that disk)`,
    );
  }
  if (m.history) console.log(describeHistorySize(m.history));
  printStorage(storage);
  if (m.idle)
    console.log(
      `idle (sorter connected, 0 items/s, two long polls waiting, ${m.idle.seconds} s): ${m.idle.cpuPct}% of a core, ${m.idle.threads} threads, RSS ${m.idle.rssMb} MB (peak ${m.idle.peakRssMb})${m.idle.throttling && c.serviceCpuPct != null ? `; limited to ${c.serviceCpuPct}% of a core, throttled in ${m.idle.throttling.throttled} of ${m.idle.throttling.periods} periods` : ''}${m.idle.nodeArgs ? `; node ${m.idle.nodeArgs.join(' ')}` : ''}`,
    );
  const svc50 = results.service.at50;
  console.log(
    `service at 50/s: ${svc50.cpuPctOfCore}% of a core, RSS peak ${svc50.rssMb} MB, ${svc50.rssEndMb} MB at the end${c.serviceCpuPct != null && svc50.throttling ? `; limited to ${c.serviceCpuPct}% of a core, throttled in ${svc50.throttling.throttled} of ${svc50.throttling.periods} periods` : ''}${svc50.nodeArgs ? `; node ${svc50.nodeArgs.join(' ')} (V8's collector: ${collectorOf(svc50.nodeArgs)})` : ''}`,
  );
  printPurge(purge);
  printMemory(m.memory, c);
  const base = results.baseline;
  const svc = results.service;
  const { lost, duplicated, baselineOverrun } = correctness(m, siteRate);
  console.log(
    `\nservice vs baseline: throughput ${ratio(svc.max, base.max)}x${base.brokeDown ? '' : ' (the baseline did not break down: an upper bound)'}, wake p99 ${ratio(svc.at50.wakeP99, base.at50.wakeP99)}x, decision p99 @50/s +${svc.at50.decisionP99 != null && base.at50.decisionP99 != null ? (svc.at50.decisionP99 - base.at50.decisionP99).toFixed(2) : '?'} ms`,
  );
  console.log(
    `pop at ${c.scaleRows.toLocaleString('en')} queued vs ~empty: ${ratio(sc.popFull, sc.popEmpty)}x; seeding ${sc.seed.rows.toLocaleString('en')} rows ${sc.seed.seconds.toFixed(1)} s (peak ${sc.seed.maxRssMb.toFixed(0)} MB)`,
  );
  for (const p of m.cpuPairs ?? []) {
    console.log(`CPU per item at ${p.rate}/s, service against baseline side by side (${p.pairs.length} pairs): ${spreadText(p)}`);
    if (p.wake) console.log(`wake p99 at ${p.rate}/s, service against baseline side by side: ${spreadText(p.wake)}`);
  }
  const overrun =
    baselineOverrun > 0 ? ` (the baseline, in memory, left ${baselineOverrun} items unfinished in the steps it broke down in)` : '';
  console.log(`correctness: lost ${lost}, duplicated ${duplicated}${overrun}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The `BENCH` line's fields of the storage steps (a slow disk, an operator's lock) and the purge probe, in their order. */
function storageFields(storage: Measured['storage'], purge: Measured['purge']): Record<string, unknown> {
  const { slow20, slow5, lock } = storage;
  return {
    slow_disk_decision_p99_ms: slow20?.decisionP99 ?? null,
    slow_disk_decision_p50_ms: slow20?.decisionP50 ?? null,
    slow_disk_late: slow20?.late ?? null,
    slow_disk_disk_kb_per_item: slow20?.diskKbPerCycle ?? null,
    slow_disk_device_kb_per_item: slow20?.deviceKbPerCycle ?? null,
    slow_disk_syncs_per_item: slow20?.syncsPerCycle ?? null,
    slow_disk_rejected: slow20?.rejected ?? null,
    slow_disk_passes_without_assignment: slow20?.passesWithoutAssignment ?? null,
    slow_disk_items_per_s: slow5.max,
    lock_status_p99_ms: lock?.statusP99Ms ?? null,
    lock_reconnects: lock?.reconnects ?? null,
    lock_late: lock?.late ?? null,
    lock_passes_without_assignment: lock?.passesWithoutAssignment ?? null,
    ...stallFields(storage),
    purge_rows: purge?.chunks.purged ?? null,
    purge_fsync_delay_ms: purge?.fsyncDelayMs ?? null,
    purge_seconds: purge?.chunks.seconds ?? null,
    purge_commit_p99_before_ms: purge?.chunks.commitP99BeforeMs ?? null,
    purge_commit_p99_ms: purge?.chunks.commitP99Ms ?? null,
    purge_commit_max_ms: purge?.chunks.commitMaxMs ?? null,
    purge_one_transaction_commit_p99_ms: purge?.one.commitP99Ms ?? null,
    purge_one_transaction_commit_max_ms: purge?.one.commitMaxMs ?? null,
    purge_size_rows: purge?.size?.purged ?? null,
    purge_size_seconds: purge?.size?.seconds ?? null,
    purge_size_commit_p99_before_ms: purge?.size?.commitP99BeforeMs ?? null,
    purge_size_commit_p99_ms: purge?.size?.commitP99Ms ?? null,
    purge_size_commit_max_ms: purge?.size?.commitMaxMs ?? null,
  };
}

/** The `BENCH` line's fields of the stall step: an SD card's sync stalls at 50 items/s. */
function stallFields({ stall, stallOf }: Measured['storage']): Record<string, unknown> {
  return {
    stall_ms: stallOf?.ms ?? null,
    stall_every_s: stallOf?.everyS ?? null,
    stall_count: stall?.stalls ?? null,
    stall_decision_p50_ms: stall?.decisionP50 ?? null,
    stall_decision_p99_ms: stall?.decisionP99 ?? null,
    stall_decision_max_ms: stall?.decisionMax ?? null,
    stall_late: stall?.late ?? null,
    stall_passes_without_assignment: stall?.passesWithoutAssignment ?? null,
    stall_rejected: stall?.rejected ?? null,
    stall_lost: stall?.lost ?? null,
    stall_duplicated: stall?.duplicated ?? null,
  };
}

/** The `BENCH` line's fields of the service's CPU and memory: its share of a core (`--service-cpu`) and how often it was held back, idle and at 50 items/s. */
function cpuFields(svc: TargetResult, idle: IdleResult | undefined, c: ReportContext): Record<string, unknown> {
  const steps = [svc.at50, ...svc.ramp].filter((r) => r.throttling !== null);
  const sum = (f: (r: StepResult) => number) => (steps.length > 0 ? steps.reduce((s, r) => s + f(r), 0) : null);
  const nodeArgs = c.serviceNodeArgs ?? svc.at50.nodeArgs ?? null;
  return {
    service_node_args: nodeArgs?.join(' ') ?? null,
    service_collector: nodeArgs ? collectorOf(nodeArgs) : null,
    service_cpu_pct: c.serviceCpuPct ?? null,
    service_cpu_skipped: c.serviceCpuSkipped ?? null,
    service_cpu_periods: sum((r) => r.throttling?.periods ?? 0), // steps: those with throttling figures
    service_cpu_throttled_periods: sum((r) => r.throttling?.throttled ?? 0),
    service_cpu_periods_at_50: svc.at50.throttling?.periods ?? null,
    service_cpu_throttled_periods_at_50: svc.at50.throttling?.throttled ?? null,
    service_cpu_used_pct_at_50: svc.at50.cpuPctOfCore,
    service_cpu_used_pct_at_max: svc.atMax?.cpuPctOfCore ?? null,
    rss_peak_mb_at_50: svc.at50.rssMb,
    rss_end_mb_at_50: svc.at50.rssEndMb,
    idle_seconds: idle?.seconds ?? null,
    idle_cpu_pct: idle?.cpuPct ?? null,
    idle_threads: idle?.threads ?? null,
    idle_rss_mb: idle?.rssMb ?? null,
    idle_peak_rss_mb: idle?.peakRssMb ?? null,
    idle_cpu_periods: idle?.throttling?.periods ?? null, // --service-cpu: the idle service in the same cgroup
    idle_cpu_throttled_periods: idle?.throttling?.throttled ?? null,
    idle_node_args: idle?.nodeArgs?.join(' ') ?? null,
  };
}

/** The memory step (--memory-minutes): the service's resident memory minute by minute from its start, and what it lost. */
export function memoryFields(memory: StepResult | undefined, c: ReportContext) {
  return {
    memory_minutes: memory ? (c.memoryMinutes ?? null) : null,
    memory_rate: memory?.rate ?? null,
    memory_rss_mb_by_minute: memory?.rssSeries ?? null,
    memory_rss_peak_mb: memory?.rssMb ?? null,
    memory_rss_end_mb: memory?.rssEndMb ?? null,
    memory_lost: memory?.lost ?? null,
    memory_duplicated: memory?.duplicated ?? null,
    memory_decision_p99_ms: memory?.decisionP99 ?? null,
    memory_decision_max_ms: memory?.decisionMax ?? null,
    memory_late: memory?.late ?? null,
    memory_passes_without_assignment: memory?.passesWithoutAssignment ?? null,
    memory_rejected: memory?.rejected ?? null,
    memory_service_late_by_minute: memory?.lateSeries ?? null,
  };
}

/** The memory step's line: the resident memory at each minute. */
function printMemory(memory: StepResult | undefined, c: ReportContext): void {
  if (!memory) return;
  console.log(`memory over ${c.memoryMinutes} min at ${memory.rate}/s from the start: ${describeMemoryStep(memory)}`);
}

/** The memory step's figures, minute by minute where it ran a minute or more. */
export function describeMemoryStep(memory: StepResult): string {
  const rss = memory.rssSeries ?? [];
  const late = memory.lateSeries ?? [];
  const byMinute =
    rss.length > 0 ? `RSS ${rss.join(', ')} MB at minutes 1 to ${rss.length}, ` : 'RSS (no reading a minute: under a minute), ';
  const decisions = `decision p99 ${memory.decisionP99} ms, max ${memory.decisionMax} ms, late ${memory.late}, passes without assignment ${memory.passesWithoutAssignment}, rejected ${memory.rejected}`;
  const lateByMinute = late.length > 0 ? ` (the service's late count minute by minute: ${late.map((n) => n ?? '-').join(', ')})` : '';
  return `${byMinute}peak ${memory.rssMb} MB, ${memory.rssEndMb} MB at the end; ${decisions}${lateByMinute}, lost ${memory.lost}, duplicated ${memory.duplicated}`;
}

/** The site's rate (--site-rate): what it writes, its decisions, and the eMMC's life at it. */
function siteFields(site: StepResult | undefined, siteRate: number | null) {
  const wear = siteWear(site, siteRate);
  return {
    site_rate: siteRate,
    site_disk_kb_per_item: site?.diskKbPerCycle ?? null,
    site_device_kb_per_item: site?.deviceKbPerCycle ?? null,
    site_device_writes_per_item: site?.deviceWritesPerCycle ?? null,
    site_syncs_per_item: site?.syncsPerCycle ?? null,
    site_decision_p99_ms: site?.decisionP99 ?? null,
    site_late: site?.late ?? null,
    site_passes_without_assignment: site?.passesWithoutAssignment ?? null,
    site_process_gb_per_day: wear.processGb,
    site_device_gb_per_day: wear.deviceGb,
    site_emmc_32gb_100tbw_years: wear.years,
    site_emmc_32gb_100tbw_years_by_process: wear.yearsByProcess,
  };
}

/** The history's size at the site's rate (--site-rate): its BENCH fields. */
function historyFields(history: Measured['history']) {
  return {
    site_history_bytes_per_item: history?.bytesPerItem ?? null,
    site_history_gb_per_day: history?.gbPerDay ?? null,
    site_history_days_fit: history ? Object.fromEntries(history.cards.map((c) => [`${c.cardGb}gb`, c.daysFit])) : null,
    site_history_retention_fits_from_gb: history?.retentionFitsFromGb ?? null,
  };
}

/** The `BENCH` line's `modes`: each target's own figures. */
export function modeFields(results: Measured['results']) {
  return Object.fromEntries(
    Object.entries(results).map(([k, r]) => [
      k,
      {
        items_per_s: Math.round(r.max),
        wake_p99_ms: r.at50.wakeP99,
        decision_p99_ms_at_50: r.at50.decisionP99,
        decision_p99_ms_at_max: r.atMax?.decisionP99 ?? null,
        cpu_us_per_cycle_at_max: r.atMax?.cpuUsPerCycle.target ?? null,
        disk_kb_per_item_at_50: r.at50.diskKbPerCycle,
        device_kb_per_item_at_50: r.at50.deviceKbPerCycle,
        device_writes_per_item_at_50: r.at50.deviceWritesPerCycle,
        syncs_per_item_at_50: r.at50.syncsPerCycle,
        cpu_us_per_cycle_at_50: r.at50.cpuUsPerCycle.target,
        cpu_us_per_cycle_by_thread_at_50: r.at50.cpuUsPerCycleByThread,
        cpu_us_per_cycle_by_thread_at_max: r.atMax?.cpuUsPerCycleByThread ?? null,
        late_at_50: r.at50.late,
        passes_without_assignment_at_50: r.at50.passesWithoutAssignment,
        decision_p99_ms_runs_at_50: r.at50.runs?.decisionP99 ?? null,
        decision_p99_ms_runs_at_max: r.atMax?.runs?.decisionP99 ?? null,
        cpu_us_per_cycle_runs_at_50: r.at50.runs?.cpuUsPerCycle ?? null,
        cpu_us_per_cycle_runs_at_max: r.atMax?.runs?.cpuUsPerCycle ?? null,
        late_runs_at_50: r.at50.runs?.late ?? null,
        late_runs_at_max: r.atMax?.runs?.late ?? null,
        passes_without_assignment_runs_at_50: r.at50.runs?.passesWithoutAssignment ?? null,
        passes_without_assignment_runs_at_max: r.atMax?.runs?.passesWithoutAssignment ?? null,
        rejected_runs_at_50: r.at50.runs?.rejected ?? null,
        rejected_runs_at_max: r.atMax?.runs?.rejected ?? null,
      },
    ]),
  );
}

/** The `BENCH {json}` line's fields (docs/performance.md, "Reproduce"). */
export function benchLine(m: Measured, c: ReportContext): Record<string, unknown> {
  const { results, site, storage, purge, scale: sc } = m;
  const { quick, siteRate, fsyncDelayMs, serviceConfig, warmupS = 0, syncStall = null } = c;
  const base = results.baseline;
  const svc = results.service;
  const { lost, duplicated, baselineOverrun } = correctness(m, siteRate);
  return {
    quick,
    items_per_s: Math.round(svc.max),
    baseline_items_per_s: Math.round(base.max),
    wake_p50_ms: svc.at50.wakeP50,
    wake_p99_ms: svc.at50.wakeP99,
    baseline_wake_p99_ms: base.at50.wakeP99,
    decision_p99_ms_at_50: svc.at50.decisionP99,
    decision_max_ms_at_50: svc.at50.decisionMax,
    late_at_50: svc.at50.late,
    passes_without_assignment_at_50: svc.at50.passesWithoutAssignment,
    rejected_at_50: svc.at50.rejected,
    late_at_max: svc.atMax?.late ?? null,
    passes_without_assignment_at_max: svc.atMax?.passesWithoutAssignment ?? null,
    disk_kb_per_item_at_50: svc.at50.diskKbPerCycle,
    device_kb_per_item_at_50: svc.at50.deviceKbPerCycle,
    device_writes_per_item_at_50: svc.at50.deviceWritesPerCycle,
    syncs_per_item_at_50: svc.at50.syncsPerCycle,
    ...siteFields(site, siteRate),
    ...historyFields(m.history),
    baseline_decision_p99_ms_at_50: base.at50.decisionP99,
    decision_p99_ms_at_max: svc.atMax?.decisionP99 ?? null,
    pop_1m_vs_empty: ratio(sc.popFull, sc.popEmpty),
    pop_rows: c.scaleRows,
    count_whole_ms: sc.count ? Math.round(sc.count.wholeMs * 100) / 100 : null,
    count_sliced_ms: sc.count ? Math.round(sc.count.slicedMs * 100) / 100 : null,
    count_longest_slice_ms: sc.count ? Math.round(sc.count.longestSliceMs * 100) / 100 : null,
    seed_1m_s: Math.round(sc.seed.seconds * 100) / 100,
    seed_rows: sc.seed.rows,
    seed_peak_rss_mb: Math.round(sc.seed.maxRssMb),
    rss_mb: Math.max(...[svc.at50, ...svc.ramp].map((x) => x.rssMb)),
    lost,
    duplicated,
    baseline_unfinished_when_broken_down: baselineOverrun,
    durability: 'FULL+group-commit',
    fsync_delay_ms: fsyncDelayMs,
    sync_stall: syncStall ? `${syncStall.ms}/${syncStall.everyS}` : null,
    service_config: serviceConfig ?? null,
    layout: c.layout ?? 'v1',
    warmup_s: warmupS,
    ...storageFields(storage, purge),
    ...cpuFields(svc, m.idle, c),
    ...memoryFields(m.memory, c),
    ...cpuPairFields(m.cpuPairs),
    baseline_broke_down: base.brokeDown,
    modes: modeFields(results),
  };
}
