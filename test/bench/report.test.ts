// The benchmark's verdict on lost and duplicated items (bench/report.ts, correctness): every step
// of the service counts; the in-memory baseline's count only where it kept up, since its ramp goes
// on until it breaks down and an overrun baseline drops what it holds.
import { type Measured, correctness, describeMemoryStep, memoryFields } from '../../bench/report';
import { type StepResult, spread } from '../../bench/step';

const step = (rate: number, sustained: boolean, lost = 0, duplicated = 0) =>
  ({ rate, sustained, lost, duplicated }) as unknown as StepResult;
const target = (at50: StepResult, ...ramp: StepResult[]) => ({ at50, ramp, max: 0, brokeDown: ramp.some((r) => !r.sustained) });
const measured = (baseline: ReturnType<typeof target>, service: ReturnType<typeof target>) =>
  ({ results: { baseline, service }, storage: { slow5: { max: null, ramp: [] } } }) as unknown as Measured;

it('a baseline overrun in a step it broke down in is reported apart, not as lost', () => {
  const m = measured(target(step(50, true), step(600, true), step(6000, false, 80_026)), target(step(50, true), step(600, true)));
  expect(correctness(m, null)).toEqual({ lost: 0, duplicated: 0, purgeWrong: false, baselineOverrun: 80_026 });
});

it("a loss in a step the baseline sustained counts, as does any of the service's, broken down or not", () => {
  expect(correctness(measured(target(step(50, true, 3)), target(step(50, true))), null)).toMatchObject({ lost: 3, baselineOverrun: 0 });
  expect(correctness(measured(target(step(50, true)), target(step(50, true), step(1000, false, 7, 2))), null)).toMatchObject({
    lost: 7,
    duplicated: 2,
  });
  // The overrun baseline's step is left out whole: what it duplicated when overrun is not the service's either.
  expect(correctness(measured(target(step(50, true), step(6000, false, 0, 4)), target(step(50, true))), null)).toMatchObject({
    duplicated: 0,
    baselineOverrun: 0,
  });
});

it("the memory step (--memory-minutes) counts in the verdict, and its minutes' memory and decisions go into the BENCH line", () => {
  const memory = {
    ...step(50, true, 1, 2),
    rssMb: 112,
    rssEndMb: 111,
    rssSeries: [104, 108, 110.5, 111],
    decisionP99: 3.7,
    decisionMax: 41,
    late: 5,
    passesWithoutAssignment: 6,
    rejected: 0,
    lateSeries: [0, 5, null, 0],
  } as StepResult;
  const m = { ...measured(target(step(50, true)), target(step(50, true))), memory };
  expect(correctness(m, null)).toMatchObject({ lost: 1, duplicated: 2 });
  expect(
    memoryFields(memory, { quick: false, scaleRows: 0, siteRate: null, fsyncDelayMs: 0, serviceConfig: undefined, memoryMinutes: 4 }),
  ).toEqual({
    memory_minutes: 4,
    memory_rate: 50,
    memory_rss_mb_by_minute: [104, 108, 110.5, 111],
    memory_rss_peak_mb: 112,
    memory_rss_end_mb: 111,
    memory_lost: 1,
    memory_duplicated: 2,
    memory_decision_p99_ms: 3.7,
    memory_decision_max_ms: 41,
    memory_late: 5,
    memory_passes_without_assignment: 6,
    memory_rejected: 0,
    memory_service_late_by_minute: [0, 5, null, 0],
  });
  expect(memoryFields(undefined, { quick: false, scaleRows: 0, siteRate: null, fsyncDelayMs: 0, serviceConfig: undefined })).toMatchObject({
    memory_minutes: null,
    memory_rss_mb_by_minute: null,
    memory_late: null,
    memory_service_late_by_minute: null,
  });
});

it("the memory step's line gives each minute, or says a run under a minute has no reading a minute", () => {
  const figures = {
    ...step(50, true),
    rssMb: 96,
    rssEndMb: 95,
    decisionP99: 4.1,
    decisionMax: 9,
    late: 0,
    passesWithoutAssignment: 0,
    rejected: 0,
  };
  expect(describeMemoryStep({ ...figures, rssSeries: [94, 95.5], lateSeries: [0, null] } as StepResult)).toBe(
    "RSS 94, 95.5 MB at minutes 1 to 2, peak 96 MB, 95 MB at the end; decision p99 4.1 ms, max 9 ms, late 0, passes without assignment 0, rejected 0 (the service's late count minute by minute: 0, -), lost 0, duplicated 0",
  );
  expect(describeMemoryStep({ ...figures, rssSeries: [], lateSeries: [] } as StepResult)).toBe(
    'RSS (no reading a minute: under a minute), peak 96 MB, 95 MB at the end; decision p99 4.1 ms, max 9 ms, late 0, passes without assignment 0, rejected 0, lost 0, duplicated 0',
  );
});

it("a figure over several runs is shown as min/median/max, a run without it left out (the step line's spread)", () => {
  expect(spread([46.09, 12.3, 83.79, 20.5, 30])).toBe('12.3/30/83.79');
  expect(spread([5, null, 9, 7])).toBe('5/7/9');
  expect(spread([null, Number.NaN])).toBe('-');
});
