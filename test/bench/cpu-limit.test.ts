// The benchmark's slower CPU (bench/cpu-limit.ts, `--service-cpu`): a real cgroup holding a busy
// process to its share of a core, and gone afterwards. Root and a cgroup file system only.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type CpuLimit, createCpuLimit, parseCpuPct, quotaOf } from '../../bench/cpu-limit';
import { cpuMs, sleep } from '../../bench/processes';
import { projectRoot } from '../../lib/process/paths';
import { describeWhen, missingCpuLimit } from '../helpers/tools';

describe('parseCpuPct', () => {
  it('takes a percentage of one core above 0 and at most 100', () => {
    expect(parseCpuPct('25')).toBe(25);
    expect(parseCpuPct('2.5')).toBe(2.5);
    for (const bad of ['', '0', '-5', '101', 'a lot', '25%']) expect(parseCpuPct(bad)).toMatch(/^takes the percentage of one core .* got /);
  });

  it("hands the quota out every 10 ms, or less often where it would fall under the kernel's 1 ms", () => {
    expect(quotaOf(25)).toEqual({ periodUs: 10_000, quotaUs: 2_500 });
    expect(quotaOf(5)).toEqual({ periodUs: 20_000, quotaUs: 1_000 });
  });
});

describe('createCpuLimit where it is not allowed', () => {
  it('says why in one sentence, for a user other than root', () => {
    if (process.getuid?.() !== 0) {
      expect(createCpuLimit(25)).toBe(process.platform === 'linux' ? 'creating a cgroup needs root' : 'cgroups are Linux only');
      return;
    }
    // As root: the built module in a child running as nobody, with none of this process's
    // preloads (NODE_OPTIONS: the other Node lines' addon loader logs to a folder nobody may write).
    const script = `process.stdout.write(String(require(${JSON.stringify(path.join(projectRoot, 'dist/bench/cpu-limit.js'))}).createCpuLimit(25)))`;
    const env = { PATH: process.env.PATH ?? '' };
    const r = spawnSync(process.execPath, ['-e', script], { uid: 65534, gid: 65534, encoding: 'utf8', env });
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({ stdout: 'creating a cgroup needs root', stderr: '' });
  });
});

const withCgroups = describeWhen(missingCpuLimit(), 'createCpuLimit');

withCgroups('createCpuLimit', () => {
  let limit: CpuLimit | undefined;
  afterEach(() => {
    if (limit) limit.remove();
  });

  it('holds a busy process at 20% of a core for 2 s, and removes the group afterwards', async () => {
    const made = createCpuLimit(20);
    if (typeof made === 'string') throw new Error(made);
    limit = made;
    const busy = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    const exited = new Promise((r) => busy.once('exit', r));
    limit.add(busy.pid!);
    // Measured from once it is in the group: the node start-up before counts for nothing.
    const cpu0 = cpuMs(busy.pid!);
    const t0 = performance.now();
    await sleep(2000);
    const share = (cpuMs(busy.pid!) - cpu0) / (performance.now() - t0);
    busy.kill('SIGKILL');
    await exited;
    const { periods, throttled } = limit.throttling();
    expect(share).toBeLessThan(0.5);
    expect(share).toBeGreaterThan(0.05);
    expect(periods).toBeGreaterThan(50);
    expect(throttled).toBeGreaterThan(periods / 2);
    limit.remove();
    expect(fs.existsSync(limit.dir)).toBe(false);
  });

  it('removes a group that still holds a running process (a bench that failed), which goes on outside it', async () => {
    const made = createCpuLimit(50);
    if (typeof made === 'string') throw new Error(made);
    limit = made;
    const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const exited = new Promise((r) => idle.once('exit', r));
    limit.add(idle.pid!);
    limit.remove();
    expect(fs.existsSync(limit.dir)).toBe(false);
    expect(idle.exitCode).toBeNull();
    idle.kill('SIGKILL');
    await exited;
  });
});
