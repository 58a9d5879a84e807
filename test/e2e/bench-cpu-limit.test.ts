// `npm run bench -- --service-cpu PCT --memory-minutes N`: a soak on a slow CPU in one command. The
// idle probe and the memory step run with the main plan's settings, so their services join the same
// cgroup as the main plan's, which the bench removes only once the last is done. Root and a cgroup
// file system only.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TIMELINE_HEADER } from '../../bench/thread-timeline';
import { runBench } from '../helpers/bench-run';
import { describeWhen, missingCpuLimit } from '../helpers/tools';

jest.setTimeout(180_000);

const withCgroups = describeWhen(missingCpuLimit(), 'the bench with --service-cpu');

withCgroups('the bench on a slower CPU with a memory step', () => {
  it('runs the idle probe and the memory step in the cgroup of --service-cpu, then removes the group', async () => {
    const plan = ['--quick', '--targets', 'baseline,service', '--rates', '30', '--runs', '1', '--seconds', '2'];
    const timelines = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-bench-threads-'));
    const { code, out } = await runBench([
      ...plan,
      '--no-scale',
      '--no-storage',
      '--service-cpu',
      '50',
      '--memory-minutes',
      '0.1',
      '--thread-timeline',
      timelines,
    ]);
    expect({ code, tail: code === 0 ? '' : out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    try {
      expectWithinQuota(timelines, 0.5);
    } finally {
      fs.rmSync(timelines, { recursive: true, force: true });
    }
    const dir = /limited to 50% of one core \(cgroup v\d (\S+), --service-cpu\)/.exec(out)?.[1];
    expect(dir).toBeDefined();
    // The memory step's line reports the group's throttling: its service ran in the group.
    const memoryStep = out.split('\n').find((l) => /^ {2}service, 0\.1 min at 50\/s/.test(l));
    expect(memoryStep).toMatch(/cpu [\d.]+% of a core, throttled in \d+ of [1-9]\d* periods/);
    expect(out).toMatch(/^memory over 0\.1 min at 50\/s from the start: RSS \(no reading a minute: under a minute\), peak \d+ MB/m);
    // The idle service too: the group's periods counted while it idled, and the launcher's choice for half a core.
    expect(out).toMatch(
      /^idle \(sorter connected, .*; limited to 50% of a core, throttled in \d+ of [1-9]\d* periods; node --max-semi-space-size=2 --single-threaded-gc --no-turbo-inlining$/m,
    );
    const line = JSON.parse(/^BENCH (.*)$/m.exec(out)?.[1] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ service_cpu_pct: 50, memory_minutes: 0.1, memory_lost: 0, memory_duplicated: 0 });
    expect(line.idle_cpu_periods).toBeGreaterThan(0);
    expect(line.idle_cpu_throttled_periods).toEqual(expect.any(Number));
    expect(line.idle_node_args).toBe('--max-semi-space-size=2 --single-threaded-gc --no-turbo-inlining');
    // Its launcher saw the group's half core from its first instruction: the collector for less than four
    // cores, and V8 without inlining below one.
    expect(line).toMatchObject({
      service_collector: 'single-threaded',
      service_node_args: '--max-semi-space-size=2 --single-threaded-gc --no-turbo-inlining',
    });
    expect(fs.existsSync(dir!)).toBe(false);
  });
});

/**
 * Each service run's CPU thread by thread (`--thread-timeline`) fits in the group's share of each
 * window: the threads together never ran longer than `share` of it allows, give or take the
 * kernel's period at the window's edges and the readings' own timing.
 */
function expectWithinQuota(dir: string, share: number): void {
  const files = fs.readdirSync(dir).sort();
  expect(files).toEqual(expect.arrayContaining([expect.stringMatching(/^\d{3}-baseline-30-threads\.csv$/)]));
  const service = files.filter((f) => /^\d{3}-service-\d+-threads\.csv$/.test(f));
  expect(service.length).toBeGreaterThanOrEqual(2); // the main plan's step and the memory step
  for (const file of service) {
    const [header, ...rows] = fs.readFileSync(path.join(dir, file), 'utf8').trim().split('\n');
    expect(header).toBe(TIMELINE_HEADER);
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) {
      const [, windowMs, main, writer, checkpoint, other] = row.split(',').map(Number) as [number, number, number, number, number, number];
      expect(main).toBeGreaterThanOrEqual(0);
      expect({ file, row, within: main + writer + checkpoint + other <= share * windowMs + 15 }).toEqual({ file, row, within: true });
    }
    // The service's item runs on its main thread and its writer: both show in the run.
    const sums = rows.map((r) => r.split(',').map(Number)).reduce((a, r) => [a[0]! + r[2]!, a[1]! + r[3]!], [0, 0]);
    expect(sums[0]).toBeGreaterThan(0);
    expect(sums[1]).toBeGreaterThan(0);
  }
}
