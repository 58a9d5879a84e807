// The CPU ratio measured in pairs (bench/cpu-pairs.ts): the order swaps from pair to pair, each
// ratio is the service's CPU an item over the baseline's in the same pair, the spread is of the
// ratios, and every pair's steps count in the bench's verdict on lost and duplicated items.
import { type CpuPairs, cpuPairFields, pairOf, pairOrder, ratioSpread } from '../../bench/cpu-pairs';
import { type Measured, correctness } from '../../bench/report';
import type { StepResult } from '../../bench/step';

const step = (cpuUs: number, { sustained = true, lost = 0, duplicated = 0, wakeP99 = null as number | null } = {}) =>
  ({ rate: 50, sustained, lost, duplicated, wakeP99, cpuUsPerCycle: { target: cpuUs, emulator: 0, client: 0 } }) as unknown as StepResult;

it('the baseline goes first in the first pair, the service in the second, and so on', () => {
  expect([0, 1, 2, 3].map((i) => pairOrder(i))).toEqual([
    ['baseline', 'service'],
    ['service', 'baseline'],
    ['baseline', 'service'],
    ['service', 'baseline'],
  ]);
});

it('with the hapi baseline, it runs between the two, so that each pair is still one right after the other', () => {
  expect([0, 1].map((i) => pairOrder(i, true))).toEqual([
    ['baseline', 'baseline-hapi', 'service'],
    ['service', 'baseline-hapi', 'baseline'],
  ]);
});

it("the hapi baseline's ratio is over the bare baseline's in the same pair; its breakdown leaves the pair out", () => {
  expect(pairOf(step(800), step(2600), false, step(1200))).toEqual({
    baselineUs: 800,
    serviceUs: 2600,
    ratio: 3.25,
    serviceFirst: false,
    sustained: true,
    hapiUs: 1200,
    hapiRatio: 1.5,
  });
  const pairs = [pairOf(step(100), step(300), false, step(150)), pairOf(step(100), step(320), true, step(170, { sustained: false }))];
  expect(ratioSpread(pairs)).toEqual({ min: 3, median: 3, max: 3 });
  expect(ratioSpread(pairs, (p) => p.hapiRatio)).toEqual({ min: 1.5, median: 1.5, max: 1.5 });
});

it("a pair's ratio is the service's CPU an item over the baseline's, and it is sustained only if both steps were", () => {
  expect(pairOf(step(800), step(2600), false)).toEqual({
    baselineUs: 800,
    serviceUs: 2600,
    ratio: 3.25,
    serviceFirst: false,
    sustained: true,
  });
  expect(pairOf(step(300), step(1000, { sustained: false }), true)).toMatchObject({ ratio: 3.33, serviceFirst: true, sustained: false });
});

it('the spread is min, median and max of the ratios, whatever their order; an even count takes the mean of the middle two', () => {
  const pairs = (...ratios: number[]) => ratios.map((r) => pairOf(step(100), step(r * 100), false));
  expect(ratioSpread(pairs(3.5, 2.8, 3.1))).toEqual({ min: 2.8, median: 3.1, max: 3.5 });
  expect(ratioSpread(pairs(3.27, 3))).toEqual({ min: 3, median: 3.14, max: 3.27 });
  expect(ratioSpread(pairs(4))).toEqual({ min: 4, median: 4, max: 4 });
});

it('a pair whose step broke down is left out of the spread (its CPU an item measured an overload, even a negative one)', () => {
  const broke = pairOf(step(365), step(-5207, { sustained: false }), false);
  const held = [2.93, 2.37, 2.66, 2.99].map((r) => pairOf(step(100), step(r * 100), false));
  expect(ratioSpread([...held, broke])).toEqual({ min: 2.37, median: 2.8, max: 2.99 });
  expect(ratioSpread([broke]).median).toBeNaN();
});

it("a pair's wake ratio is the service's wake p99 over the baseline's in the same pair; none where a step measured none", () => {
  expect(pairOf(step(500, { wakeP99: 0.4 }), step(1800, { wakeP99: 0.6 }), true)).toEqual({
    baselineUs: 500,
    serviceUs: 1800,
    ratio: 3.6,
    serviceFirst: true,
    sustained: true,
    baselineWakeP99Ms: 0.4,
    serviceWakeP99Ms: 0.6,
    wakeRatio: 1.5,
  });
  expect(pairOf(step(500), step(1800, { wakeP99: 0.6 }), false).wakeRatio).toBeUndefined();
  expect(pairOf(step(500, { wakeP99: 0 }), step(1800, { wakeP99: 0.6 }), false).wakeRatio).toBeUndefined();
  const pairs = [0.54, 0.67, 0.59].map((w) => pairOf(step(500, { wakeP99: 0.4 }), step(1800, { wakeP99: w }), false));
  expect(ratioSpread(pairs, (p) => p.wakeRatio)).toEqual({ min: 1.35, median: 1.48, max: 1.68 });
});

it("the BENCH line adds each pair's wake figures and their spread where the steps measured them", () => {
  const pairs = [pairOf(step(500, { wakeP99: 0.4 }), step(1800, { wakeP99: 0.6 }), false)];
  const fields = cpuPairFields([{ rate: 50, pairs, ...ratioSpread(pairs), steps: [], wake: ratioSpread(pairs, (p) => p.wakeRatio) }]);
  expect(fields.cpu_ratio_at_50).toEqual({
    min: 3.6,
    median: 3.6,
    max: 3.6,
    pairs: [
      {
        baseline_us: 500,
        service_us: 1800,
        ratio: 3.6,
        service_first: false,
        sustained: true,
        baseline_wake_p99_ms: 0.4,
        service_wake_p99_ms: 0.6,
        wake_ratio: 1.5,
      },
    ],
    wake_min: 1.5,
    wake_median: 1.5,
    wake_max: 1.5,
  });
});

const at = (rate: number, ...steps: StepResult[]): CpuPairs => {
  const pairs = [pairOf(steps[0] ?? step(1), steps[1] ?? step(1), false)];
  return { rate, pairs, ...ratioSpread(pairs), steps };
};

it('the BENCH line has the spread and each pair at 50 and at 600 items/s, and null for a rate not measured', () => {
  expect(cpuPairFields([at(50, step(800), step(2400))])).toEqual({
    cpu_ratio_at_50: {
      min: 3,
      median: 3,
      max: 3,
      pairs: [{ baseline_us: 800, service_us: 2400, ratio: 3, service_first: false, sustained: true }],
    },
    cpu_ratio_at_600: null,
  });
  expect(cpuPairFields(undefined)).toEqual({ cpu_ratio_at_50: null, cpu_ratio_at_600: null });
});

it("with the hapi baseline, the BENCH line adds each pair's hapi figures and their spread, the other fields as they were", () => {
  const pairs = [pairOf(step(800), step(2400), false, step(1600))];
  const fields = cpuPairFields([{ rate: 600, pairs, ...ratioSpread(pairs), steps: [], hapi: ratioSpread(pairs, (p) => p.hapiRatio) }]);
  expect(fields.cpu_ratio_at_600).toEqual({
    min: 3,
    median: 3,
    max: 3,
    pairs: [{ baseline_us: 800, service_us: 2400, ratio: 3, service_first: false, sustained: true, hapi_us: 1600, hapi_ratio: 2 }],
    hapi_min: 2,
    hapi_median: 2,
    hapi_max: 2,
  });
});

it("an item lost or duplicated in a pair's step fails the bench like any other step's", () => {
  const clean = { at50: step(1), ramp: [], max: 0, brokeDown: false };
  const m = {
    results: { baseline: clean, service: clean },
    storage: { slow5: { max: null, ramp: [] } },
    cpuPairs: [at(50, step(800), step(2400, { lost: 2 })), at(600, step(300, { duplicated: 1 }), step(900))],
  } as unknown as Measured;
  expect(correctness(m, null)).toMatchObject({ lost: 2, duplicated: 1 });
});
