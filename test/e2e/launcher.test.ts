// The launcher npm start and the systemd units run (bin/sorter-integration): it chooses V8's
// collector from the CPU the process may use (its CPUs, its cgroup's quota), replaces itself with
// Node at the same pid, passes the service its arguments, and refuses a choice it does not know.
// Real starts of the service; the cgroups only as root on a machine that has them.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { type CpuLimit, createCpuLimit } from '../../bench/cpu-limit';
import { killAtFileEnd } from '../helpers/children';
import { removeHome, tempHome } from '../helpers/home';
import { describeWhen, itWhen, missingCommands, missingCpuLimit } from '../helpers/tools';

jest.setTimeout(60_000);
const LAUNCHER = path.resolve(__dirname, '../../bin/sorter-integration');
const SINGLE = ['--max-semi-space-size=2', '--single-threaded-gc'];
const HELPERS = ['--max-semi-space-size=2', '--v8-pool-size=1'];

interface Started {
  collector: string;
  why: string;
  nodeOptions: string[];
  /** The process's command line and environment as the kernel has them once the service runs. */
  cmdline: string[];
  environ: Record<string, string>;
  exe: string;
}

/**
 * Run `command` (which ends in the launcher) with a test-mode home until the service listens; read
 * its line naming the collector and its process, then stop it with SIGTERM, which must end it cleanly.
 */
async function launch(command: string[], env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<Started> {
  const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' } });
  const proc: ChildProcess = spawn(command[0]!, [...command.slice(1), ...args], {
    env: { ...process.env, NODE: process.execPath, SORTER_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAtFileEnd(proc);
  const exited = new Promise<number | string>((r) => proc.once('exit', (code, signal) => r(code ?? signal ?? -1)));
  try {
    // The line naming the collector comes first; then it listens, with its stop on SIGTERM in place.
    const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
      void exited.then((code) => reject(new Error(`exited (${code}) before it listened`)));
      let collector: Record<string, unknown> | undefined;
      readline.createInterface({ input: proc.stdout! }).on('line', (l) => {
        const parsed = JSON.parse(l) as Record<string, unknown>;
        if ('collector' in parsed) collector = parsed;
        if (String(parsed.msg).startsWith('listening on') && collector) resolve(collector);
      });
    });
    const pid = proc.pid!;
    const read = (f: string) => fs.readFileSync(`/proc/${pid}/${f}`, 'utf8').split('\0').filter(Boolean);
    const started = {
      collector: line.collector as string,
      why: line.why as string,
      nodeOptions: line.nodeOptions as string[],
      cmdline: read('cmdline'),
      environ: Object.fromEntries(read('environ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
      exe: fs.readlinkSync(`/proc/${pid}/exe`),
    };
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    return started;
  } finally {
    proc.kill('SIGKILL');
    removeHome(home);
  }
}

const node = fs.realpathSync(process.execPath);
const onLinux = describeWhen(process.platform === 'linux' ? {} : { '/proc': 'Linux' }, 'the launcher');

onLinux('bin/sorter-integration', () => {
  it('replaces itself with Node at the same pid, with the options it chose, two malloc arenas, and the service its arguments', async () => {
    const cpus = os.availableParallelism();
    // The home from --default-home: the argument reached the service (no SORTER_HOME).
    const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' } });
    try {
      const s = await launch(['/bin/sh', LAUNCHER], { SORTER_HOME: '' }, ['--default-home', home]);
      expect(s.exe).toBe(node);
      expect(s.why).toMatch(new RegExp(`^auto: ${cpus} CPUs?, (no CPU quota|a CPU quota of \\d+\\.\\d\\d cores); helpers from 4$`));
      // The rule for what it saw: four cores or more to use, a helper thread; less, on the allocating thread.
      const quota = /a CPU quota of ([\d.]+) cores/.exec(s.why)?.[1];
      const budget = Math.min(cpus, quota === undefined ? Infinity : Number(quota));
      const options = budget >= 4 ? HELPERS : SINGLE;
      expect(s).toMatchObject({ collector: budget >= 4 ? 'helpers' : 'single-threaded', nodeOptions: options });
      expect(s.cmdline).toEqual([process.execPath, ...options, path.resolve(__dirname, '../../dist/lib/main.js'), '--default-home', home]);
      expect(s.environ.MALLOC_ARENA_MAX).toBe('2');
      expect(s.environ.SORTER_COLLECTOR_WHY).toBe(s.why);
    } finally {
      removeHome(home);
    }
  });

  itWhen(missingCommands({ taskset: 'apt-get install util-linux' }), 'the launcher on one CPU')(
    'on one CPU (an affinity mask) chooses the single-threaded collector',
    async () => {
      const s = await launch(['taskset', '-c', '0', '/bin/sh', LAUNCHER]);
      expect(s).toMatchObject({ collector: 'single-threaded', nodeOptions: SINGLE });
      expect(s.why).toMatch(/^auto: 1 CPU, /);
    },
  );

  it('SORTER_HELPERS_FROM sets the cores from which auto chooses the helper thread', async () => {
    const cpus = os.availableParallelism();
    const s = await launch(['/bin/sh', LAUNCHER], { SORTER_HELPERS_FROM: '2' });
    expect(s.why).toMatch(new RegExp(`^auto: ${cpus} CPUs?, .*; helpers from 2$`));
    if (!s.why.includes('quota'))
      expect(s).toMatchObject(cpus >= 2 ? { collector: 'helpers', nodeOptions: HELPERS } : { collector: 'single-threaded' });
    const one = await launch(['/bin/sh', LAUNCHER], { SORTER_HELPERS_FROM: '1' });
    if (!one.why.includes('quota')) expect(one).toMatchObject({ collector: 'helpers', nodeOptions: HELPERS });
  });

  it('SORTER_COLLECTOR overrides the choice, SORTER_NODE_ARGS and MALLOC_ARENA_MAX add to it', async () => {
    const s = await launch(['/bin/sh', LAUNCHER], {
      SORTER_COLLECTOR: 'single-threaded',
      SORTER_NODE_ARGS: '--max-old-space-size=200  --stack-size=900',
      MALLOC_ARENA_MAX: '4',
    });
    expect(s).toMatchObject({ collector: 'single-threaded', nodeOptions: [...SINGLE, '--max-old-space-size=200', '--stack-size=900'] });
    expect(s.why).toMatch(/^SORTER_COLLECTOR \(\d+ CPUs?, /);
    expect(s.environ.MALLOC_ARENA_MAX).toBe('4');
    const h = await launch(['/bin/sh', LAUNCHER], { SORTER_COLLECTOR: 'helpers' });
    expect(h).toMatchObject({ collector: 'helpers', nodeOptions: HELPERS });
  });

  it('refuses a SORTER_COLLECTOR or SORTER_HELPERS_FROM it does not know with one line and exit 78, before Node starts', () => {
    const run = (env: NodeJS.ProcessEnv) => {
      const r = spawnSync('/bin/sh', [LAUNCHER], { env: { ...process.env, NODE: process.execPath, ...env }, encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    expect(run({ SORTER_COLLECTOR: 'parallel' })).toEqual({
      status: 78,
      stdout: '',
      stderr: 'sorter-integration: SORTER_COLLECTOR is auto, helpers or single-threaded; got "parallel"\n',
    });
    for (const from of ['1.5', '0', 'two', '-2'])
      expect(run({ SORTER_HELPERS_FROM: from })).toEqual({
        status: 78,
        stdout: '',
        stderr: `sorter-integration: SORTER_HELPERS_FROM is a whole number of cores, 1 or more; got "${from}"\n`,
      });
  });
});

describeWhen(missingCpuLimit(), 'the launcher in a cgroup')('bin/sorter-integration in a cgroup with a CPU quota', () => {
  const limits: CpuLimit[] = [];
  afterAll(() => limits.forEach((l) => l.remove()));
  /** The launcher started inside a new group limited to `pct`% of one core, from its first instruction. */
  const inGroup = async (pct: number, name: string, env: NodeJS.ProcessEnv = {}) => {
    const limit = createCpuLimit(pct, `sorter-launcher-${process.pid}-${name}`);
    if (typeof limit === 'string') throw new Error(limit);
    limits.push(limit);
    return launch(['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', limit.procs, '/bin/sh', LAUNCHER], env);
  };

  it('a quarter of a core: the single-threaded collector, even with helpers from one core, and no inlining', async () => {
    const s = await inGroup(25, 'quarter', { SORTER_HELPERS_FROM: '1' });
    expect(s).toMatchObject({ collector: 'single-threaded', nodeOptions: [...SINGLE, '--no-turbo-inlining'] });
    expect(s.why).toMatch(/^auto: \d+ CPUs?, a CPU quota of 0\.25 cores; helpers from 1; under one core, no inlining$/);
    // A site puts inlining back after the launcher's options: the later one wins in V8.
    const back = await inGroup(25, 'quarter-inlining', { SORTER_NODE_ARGS: '--turbo-inlining' });
    expect(back.nodeOptions).toEqual([...SINGLE, '--no-turbo-inlining', '--turbo-inlining']);
  });

  it('a forced helper thread under one core keeps no inlining; from one core, inlining as V8 has it', async () => {
    const h = await inGroup(50, 'half-helpers', { SORTER_COLLECTOR: 'helpers' });
    expect(h).toMatchObject({ collector: 'helpers', nodeOptions: [...HELPERS, '--no-turbo-inlining'] });
    expect(h.why).toMatch(/^SORTER_COLLECTOR \(\d+ CPUs?, a CPU quota of 0\.50 cores\); under one core, no inlining$/);
    const one = await inGroup(100, 'one');
    expect(one).toMatchObject({ collector: 'single-threaded', nodeOptions: SINGLE });
    expect(one.why).toMatch(/^auto: \d+ CPUs?, a CPU quota of 1\.00 cores; helpers from 4$/);
  });

  it('a quota of two cores: single-threaded by default; with helpers from two, a helper thread where the machine has two CPUs', async () => {
    const s = await inGroup(200, 'two');
    expect(s.why).toMatch(/^auto: \d+ CPUs?, a CPU quota of 2\.00 cores; helpers from 4$/);
    expect(s.collector).toBe('single-threaded');
    const h = await inGroup(200, 'two-from-2', { SORTER_HELPERS_FROM: '2' });
    expect(h.collector).toBe(os.availableParallelism() >= 2 ? 'helpers' : 'single-threaded');
  });
});
