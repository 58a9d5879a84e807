// CPU per item against the baseline, measured in pairs (`npm run bench -- --cpu-pairs N`): the
// baseline and the service one right after the other at the same rate, the order swapped from one
// pair to the next. The main plan measures each target's steps in a block of its own, minutes
// apart, and on a shared machine the CPU an item costs drifts by 10 to 40% over minutes; a ratio
// of two steps run side by side, and the spread of several such ratios, is the figure to hold a
// goal to ("CPU per item at 50 and at 600 items/s each at most 3 times the baseline's"). With
// `baseline-hapi` in --targets each pair takes a third step between the two, the same in-memory
// queues on hapi with joi: its ratio to the bare baseline is what the framework alone costs. Each
// pair also gives the wake latency's ratio (the service's p99 over the baseline's), the other
// figure the project holds to the baseline ("at most 1.5 times"), taken side by side for the same
// reason.
import type { Target } from './processes';
import { type StepContext, type StepOptions, type StepResult, medianStep } from './step';

/** The rates the pairs run at: a site's rate and the throughput goal's. */
export const PAIR_RATES = [50, 600] as const;

/** Seconds of traffic before a pair's steps measure, when the plan gives no --warmup-s: the ratio is of warmed-up processes. */
const PAIR_WARMUP_S = 30;

/** One pair: each target's CPU per item (µs, the whole process) and their ratio. */
export interface CpuPair {
  baselineUs: number;
  serviceUs: number;
  ratio: number;
  serviceFirst: boolean;
  /** Both steps kept up with the rate (all three, with the hapi baseline). */
  sustained: boolean;
  /** The hapi baseline's CPU per item in the same pair, and its ratio to the bare baseline's (when measured). */
  hapiUs?: number;
  hapiRatio?: number;
  /** Each target's wake p99 (ms) and the service's over the baseline's (when both steps measured one). */
  baselineWakeP99Ms?: number;
  serviceWakeP99Ms?: number;
  wakeRatio?: number;
}

/** The pairs at one rate and the spread of their ratios. */
export interface CpuPairs {
  rate: number;
  pairs: CpuPair[];
  min: number;
  median: number;
  max: number;
  /** The steps themselves, for the correctness check (nothing lost or duplicated in any). */
  steps: StepResult[];
  /** The spread of the hapi baseline's ratios to the bare baseline's (when measured). */
  hapi?: { min: number; median: number; max: number };
  /** The spread of the wake p99 ratios (when measured). */
  wake?: { min: number; median: number; max: number };
}

/** The order of pair `i`'s steps: the baseline first in even pairs, the service in odd ones; the hapi baseline, if measured, between them. */
export const pairOrder = (i: number, withHapi = false): Target[] => {
  const order: Target[] = withHapi ? ['baseline', 'baseline-hapi', 'service'] : ['baseline', 'service'];
  return i % 2 === 0 ? order : order.reverse();
};

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The spread of the sustained pairs' ratios: min, median (of an even count, the mean of the middle
 * two), max. A pair whose step broke down (a service that fell behind in its warm-up) measured an
 * overload, not an item's CPU, and can even give a negative figure: it is left out (the log line
 * and the BENCH line still show it, `sustained` false).
 */
export function ratioSpread(
  pairs: readonly CpuPair[],
  ratioOf = (p: CpuPair): number | undefined => p.ratio,
): { min: number; median: number; max: number } {
  const ratios = pairs
    .filter((p) => p.sustained)
    .map(ratioOf)
    .filter((r): r is number => r !== undefined)
    .sort((a, b) => a - b);
  const mid = ratios.length / 2;
  const middle =
    ratios.length % 2 === 1 ? (ratios[Math.floor(mid)] ?? Number.NaN) : ((ratios[mid - 1] ?? Number.NaN) + (ratios[mid] ?? Number.NaN)) / 2;
  return { min: round2(ratios[0] ?? Number.NaN), median: round2(middle), max: round2(ratios.at(-1) ?? Number.NaN) };
}

/** A pair from its two steps (three, with the hapi baseline's). */
export function pairOf(baseline: StepResult, service: StepResult, serviceFirst: boolean, hapi?: StepResult): CpuPair {
  const baselineUs = baseline.cpuUsPerCycle.target;
  const serviceUs = service.cpuUsPerCycle.target;
  const pair: CpuPair = {
    baselineUs,
    serviceUs,
    ratio: round2(serviceUs / baselineUs),
    serviceFirst,
    sustained: baseline.sustained && service.sustained && (hapi?.sustained ?? true),
  };
  if (hapi) Object.assign(pair, { hapiUs: hapi.cpuUsPerCycle.target, hapiRatio: round2(hapi.cpuUsPerCycle.target / baselineUs) });
  const [baselineWake, serviceWake] = [baseline.wakeP99, service.wakeP99];
  if (typeof baselineWake === 'number' && typeof serviceWake === 'number' && baselineWake > 0)
    Object.assign(pair, { baselineWakeP99Ms: baselineWake, serviceWakeP99Ms: serviceWake, wakeRatio: round2(serviceWake / baselineWake) });
  return pair;
}

/** A spread of ratios as the log lines print it: `min 2.8x, median 3.1x, max 3.5x`. */
export const spreadText = (s: { min: number; median: number; max: number }) => `min ${s.min}x, median ${s.median}x, max ${s.max}x`;

/**
 * `count` pairs at `rate`, each step `seconds` long after the warm-up; `options` per target (the
 * service's disk and CPU settings); `withHapi`: each pair measures the hapi baseline too.
 */
export async function measureCpuPairs(
  ctx: StepContext,
  rate: number,
  count: number,
  seconds: number,
  options: (target: Target) => StepOptions,
  withHapi = false,
): Promise<CpuPairs> {
  const pairCtx = { ...ctx, runs: 1, warmupS: ctx.warmupS || PAIR_WARMUP_S };
  const pairs: CpuPair[] = [];
  const steps: StepResult[] = [];
  for (let i = 0; i < count; i++) {
    const got: Partial<Record<Target, StepResult>> = {};
    const order = pairOrder(i, withHapi);
    for (const target of order) {
      got[target] = await medianStep(pairCtx, target, rate, seconds, options(target), `${target} (pair ${i + 1} of ${count})`);
    }
    const { baseline, service, 'baseline-hapi': hapi } = got;
    if (!baseline || !service || (withHapi && !hapi)) throw new Error('bench: a pair measures the baseline and the service');
    steps.push(baseline, service, ...(hapi ? [hapi] : []));
    pairs.push(pairOf(baseline, service, order[0] === 'service', hapi));
  }
  const spread = ratioSpread(pairs);
  const left = (p: CpuPair) => (p.sustained ? '' : ' (broke down: left out)');
  ctx.log(
    `  CPU per item at ${rate}/s, service against baseline in ${count} pairs (warm-up ${pairCtx.warmupS} s): ${pairs.map((p) => `${p.serviceUs}/${p.baselineUs} = ${p.ratio}x${left(p)}`).join(', ')}; ${spreadText(spread)}`,
  );
  const result: CpuPairs = { rate, pairs, ...spread, steps };
  const woke = pairs.filter((p) => p.wakeRatio !== undefined);
  if (woke.length > 0) {
    result.wake = ratioSpread(woke, (p) => p.wakeRatio);
    ctx.log(
      `  wake p99 at ${rate}/s, service against baseline in the same pairs: ${woke.map((p) => `${p.serviceWakeP99Ms}/${p.baselineWakeP99Ms} ms = ${p.wakeRatio}x${left(p)}`).join(', ')}; ${spreadText(result.wake)}`,
    );
  }
  if (!withHapi) return result;
  result.hapi = ratioSpread(pairs, (p) => p.hapiRatio);
  ctx.log(
    `  CPU per item at ${rate}/s, hapi baseline against baseline in the same pairs: ${pairs.map((p) => `${p.hapiUs}/${p.baselineUs} = ${p.hapiRatio}x${left(p)}`).join(', ')}; ${spreadText(result.hapi)}`,
  );
  return result;
}

/** The pairs' figures for the BENCH line: per rate, the spread and each pair (null: not measured). */
export function cpuPairFields(all: readonly CpuPairs[] | undefined): Record<string, unknown> {
  const at = (rate: number) => all?.find((p) => p.rate === rate);
  const fields = (p: CpuPairs | undefined) =>
    p
      ? {
          min: p.min,
          median: p.median,
          max: p.max,
          pairs: p.pairs.map((x) => ({
            baseline_us: x.baselineUs,
            service_us: x.serviceUs,
            ratio: x.ratio,
            service_first: x.serviceFirst,
            sustained: x.sustained,
            ...(x.hapiUs !== undefined ? { hapi_us: x.hapiUs, hapi_ratio: x.hapiRatio } : {}),
            ...(x.wakeRatio !== undefined
              ? { baseline_wake_p99_ms: x.baselineWakeP99Ms, service_wake_p99_ms: x.serviceWakeP99Ms, wake_ratio: x.wakeRatio }
              : {}),
          })),
          ...(p.hapi ? { hapi_min: p.hapi.min, hapi_median: p.hapi.median, hapi_max: p.hapi.max } : {}),
          ...(p.wake ? { wake_min: p.wake.min, wake_median: p.wake.median, wake_max: p.wake.max } : {}),
        }
      : null;
  return { cpu_ratio_at_50: fields(at(50)), cpu_ratio_at_600: fields(at(600)) };
}
