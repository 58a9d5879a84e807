// A step run several times (`npm run bench -- --runs N`, bench/step.ts combineRuns): its figures are
// the runs' medians, but a count that one run of three had (late assignments, passes without
// assignment, rejected items) must still be seen, in the step line and in the BENCH line's `modes`.
import { modeFields } from '../../bench/report';
import { type StepResult, combineRuns, stepLine } from '../../bench/step';

const run = (decisionP99: number, cpu: number, late: number, passes: number, rejected: number, extra: Partial<StepResult> = {}) =>
  ({
    rate: 50,
    cyclesPerS: 50,
    sustained: true,
    decisionP50: 2,
    decisionP99,
    decisionMax: decisionP99 * 2,
    wakeP50: 0.1,
    wakeP99: 0.5,
    rssMb: 98,
    rssEndMb: 97,
    cpuPctOfCore: 15,
    throttling: null,
    stalls: null,
    cpuUsPerCycle: { target: cpu, emulator: 700, client: 1000 },
    cpuUsPerCycleByThread: null,
    diskKbPerCycle: 6,
    deviceKbPerCycle: null,
    deviceWritesPerCycle: null,
    syncsPerCycle: 0.2,
    lost: 0,
    duplicated: 0,
    recirculated: passes,
    rejected,
    late,
    passesWithoutAssignment: passes,
    statusP99Ms: null,
    reconnects: 0,
    ...extra,
  }) as StepResult;

it("each count in the step's figures is the median of the runs' counts; each run's count is kept beside them, in the order run", () => {
  const r = combineRuns(50, [run(4.5, 3100, 0, 0, 0), run(900, 3300, 17, 40, 3, { lost: 1 }), run(5.1, 3200, 0, 0, 0, { duplicated: 2 })]);
  expect(r).toMatchObject({ decisionP99: 5.1, late: 0, passesWithoutAssignment: 0, rejected: 0, lost: 1, duplicated: 2, sustained: true });
  expect(r.runs).toEqual({
    decisionP99: [4.5, 900, 5.1],
    cpuUsPerCycle: [3100, 3300, 3200],
    late: [0, 17, 0],
    passesWithoutAssignment: [0, 40, 0],
    rejected: [0, 3, 0],
  });
});

it("the step line ends with the spread and each run's counts, so a run that went late is not hidden by the median", () => {
  const runs = [run(4.5, 3100, 0, 0, 0), run(900, 3300, 17, 40, 3), run(5.1, 3200, 0, 0, 0)];
  const line = stepLine('service', combineRuns(50, runs));
  expect(line).toContain('late 0  passes w/o assignment 0  rejected 0  lost 0  dup 0');
  expect(line).toMatch(
    /over 3 runs: decision p99 4\.5\/5\.1\/900 ms, cpu µs\/cycle 3100\/3200\/3300; each run late 0,17,0, passes w\/o assignment 0,40,0, rejected 0,3,0$/,
  );
  // One run: no spread to give.
  expect(stepLine('service', combineRuns(50, runs.slice(1, 2)))).toMatch(
    /late 17 {2}passes w\/o assignment 40 {2}rejected 3 {2}lost 0 {2}dup 0$/,
  );
});

it("BENCH's modes carry each run's late, without-assignment and rejected counts at 50 items/s and at the top rate", () => {
  const at50 = combineRuns(50, [run(4.5, 3100, 0, 0, 0), run(5, 3000, 2, 1, 0), run(6, 3200, 0, 0, 0)]);
  const atMax = combineRuns(600, [run(8, 980, 0, 0, 0), run(60, 1100, 0, 5, 1), run(9, 990, 0, 0, 0)]);
  const service = { at50, atMax, ramp: [atMax], max: 600, brokeDown: false };
  const baseline = { at50: combineRuns(50, [run(2, 900, 0, 0, 0)]), ramp: [], max: 2500, brokeDown: true };
  const modes = modeFields({ baseline, service });
  expect(modes.service).toMatchObject({
    late_at_50: 0,
    late_runs_at_50: [0, 2, 0],
    late_runs_at_max: [0, 0, 0],
    passes_without_assignment_runs_at_50: [0, 1, 0],
    passes_without_assignment_runs_at_max: [0, 5, 0],
    rejected_runs_at_50: [0, 0, 0],
    rejected_runs_at_max: [0, 1, 0],
    decision_p99_ms_runs_at_max: [8, 60, 9],
  });
  expect(modes.baseline).toMatchObject({ late_runs_at_50: [0], late_runs_at_max: null, rejected_runs_at_max: null });
});
