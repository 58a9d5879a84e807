// `npm run bench` stopped from outside (a CI time-out, `kill`) or failing in the middle of a step
// leaves nothing behind: its emulator and its service end with it, and the service's home in the
// temporary folder is removed. Runs the built command (dist/bench/run.js) as a real process and
// finds its children in /proc, as an operator would.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/process/paths';
import { until } from '../helpers/until';

jest.setTimeout(60_000);
const onLinux = fs.existsSync('/proc/self/stat') ? it : it.skip;

/** The pids whose parent is `ppid` (field 4 of /proc/PID/stat), not counting zombies. */
function childrenOf(ppid: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) === ppid && state !== 'Z') found.push(Number(entry));
    } catch {
      // a process that ended meanwhile
    }
  }
  return found;
}

/** Running, and not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const commandOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

/** SORTER_HOME from a process's environment (the service's home, made by the bench). */
function homeOf(pid: number): string | undefined {
  const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return env.find((e) => e.startsWith('SORTER_HOME='))?.slice('SORTER_HOME='.length);
}

describe('npm run bench ends with its children', () => {
  let bench: ChildProcess | undefined;
  let seen: number[] = [];
  afterEach(() => {
    // A failing test leaves nothing behind either.
    for (const pid of [...seen, ...(bench?.pid ? [bench.pid] : [])])
      try {
        if (alive(pid)) process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    bench = undefined;
    seen = [];
  });

  /** The bench on one long service step, once it has started the emulator and the service: their pids and the service's home. */
  async function benchRunning(): Promise<{ bench: ChildProcess; emulator: number; service: number; home: string; output: () => string }> {
    const b = spawn(
      process.execPath,
      [
        path.join(projectRoot, 'dist/bench/run.js'),
        // The service first: the targets run in the order named.
        ...['--quick', '--targets', 'service,baseline', '--rates', '30', '--runs', '1', '--seconds', '120'],
        ...['--no-scale', '--no-storage', '--no-idle'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    bench = b;
    let out = '';
    b.stdout.on('data', (d) => (out += d));
    b.stderr.on('data', (d) => (out += d));
    const pid = b.pid!;
    const find = (what: string) => childrenOf(pid).find((c) => commandOf(c).includes(what));
    await until(
      () => find('dist/emulator/main.js') !== undefined && find('dist/lib/main.js') !== undefined,
      30_000,
      'the emulator and the service started',
    );
    const emulator = find('dist/emulator/main.js')!;
    const service = find('dist/lib/main.js')!;
    seen = [emulator, service];
    const home = homeOf(service);
    if (!home) throw new Error(`the service has no SORTER_HOME: ${commandOf(service)}`);
    // The step is under way: items flow (the service's traffic log has their REQUESTs).
    const log = path.join(home, 'Service_PLC.log');
    await until(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('REQU'), 30_000, `REQUESTs in ${log}`, 100);
    return { bench: b, emulator, service, home, output: () => out };
  }

  const exited = (p: ChildProcess) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) resolve({ code: p.exitCode, signal: p.signalCode });
      else p.once('exit', (code, signal) => resolve({ code, signal }));
    });

  onLinux.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('stopped by %s: exits %d, its emulator and service gone, the home removed', async (signal, status) => {
    const run = await benchRunning();
    run.bench.kill(signal);
    expect(await exited(run.bench)).toEqual({ code: status, signal: null });
    await until(() => !alive(run.emulator) && !alive(run.service), 5000, 'the emulator and the service ended');
    expect(fs.existsSync(run.home)).toBe(false);
  });

  onLinux('failing mid-step (its service killed): exits 1 saying why, its emulator gone', async () => {
    const run = await benchRunning();
    process.kill(run.service, 'SIGKILL');
    const end = await exited(run.bench);
    expect(end).toEqual({ code: 1, signal: null });
    expect(run.output()).toMatch(/bench failed: Error: service, .* exited in the middle of its step \(SIGKILL\)/);
    await until(() => !alive(run.emulator), 5000, 'the emulator ended');
    expect(fs.existsSync(run.home)).toBe(false);
  });
});
