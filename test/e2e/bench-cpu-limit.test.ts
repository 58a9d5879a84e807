// `npm run bench -- --service-cpu PCT --memory-minutes N`: a soak on a slow CPU in one command. The
// idle probe and the memory step run with the main plan's settings, so their services join the same
// cgroup as the main plan's, which the bench removes only once the last is done. Root and a cgroup
// file system only.
import fs from 'node:fs';
import { runBench } from '../helpers/bench-run';
import { describeWhen, missingCpuLimit } from '../helpers/tools';

jest.setTimeout(180_000);

const withCgroups = describeWhen(missingCpuLimit(), 'the bench with --service-cpu');

withCgroups('the bench on a slower CPU with a memory step', () => {
  it('runs the idle probe and the memory step in the cgroup of --service-cpu, then removes the group', async () => {
    const plan = ['--quick', '--targets', 'baseline,service', '--rates', '30', '--runs', '1', '--seconds', '2'];
    const { code, out } = await runBench([...plan, '--no-scale', '--no-storage', '--service-cpu', '50', '--memory-minutes', '0.1']);
    expect({ code, tail: code === 0 ? '' : out.slice(-2000) }).toEqual({ code: 0, tail: '' });
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
