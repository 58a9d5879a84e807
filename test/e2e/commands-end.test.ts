// The commands that start other processes (`npm run bench`, `npm run demo`) leave nothing behind
// when they are stopped from outside (`kill`, a CI job's time-out) or fail: their emulator and
// their service end with them, and the bench's service homes in the temporary folder are removed.
// Runs the built commands as real processes and finds their children in /proc, as an operator
// would.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../lib/process/paths';
import { itWhen, missingCommands } from '../helpers/tools';
import { until } from '../helpers/until';

jest.setTimeout(60_000);
const linux = fs.existsSync('/proc/self/stat');
const onLinux = linux ? it : it.skip;

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

/**
 * Running: a thread of it that is not a zombie. The main thread turns zombie while the others may
 * still be ending, the process's sockets still open; they close as the last thread ends.
 */
function alive(pid: number): boolean {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).some((task) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    });
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

/**
 * What the bench made for a service it started, from the service's environment: its home (in the
 * temporary folder) and the file its sync counter counts in (in /dev/shm where there is one).
 */
function scratchOf(service: number): { home: string; syncCounter: string } {
  const env = fs.readFileSync(`/proc/${service}/environ`, 'utf8').split('\0');
  const value = (name: string) => {
    const found = env.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
    if (!found) throw new Error(`the service has no ${name}: ${commandOf(service)}`);
    return found;
  };
  return { home: value('SORTER_HOME'), syncCounter: value('SORTER_FSYNC_COUNT_FILE') };
}

/** None of `files` is left. */
const gone = (...files: string[]) => expect(files.filter((f) => fs.existsSync(f))).toEqual([]);

/** Each command started by a test, and its children seen: killed after the test, passed or failed. */
const started: ChildProcess[] = [];
const seen: number[] = [];
afterEach(() => {
  for (const pid of [...seen, ...started.map((p) => p.pid ?? 0)])
    try {
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  started.length = 0;
  seen.length = 0;
});

/** A built command as a real process (stdout and stderr gathered); its children found by their scripts once both run. */
async function command(
  script: string,
  argv: string[],
): Promise<{ proc: ChildProcess; emulator: number; service: number; output: () => string }> {
  const proc = spawn(process.execPath, [path.join(projectRoot, script), ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(proc);
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const find = (what: string) => childrenOf(proc.pid!).find((c) => commandOf(c).includes(what));
  await until(
    () => find('dist/emulator/main.js') !== undefined && find('dist/lib/main.js') !== undefined,
    30_000,
    `the emulator and the service started by ${script}`,
  );
  const emulator = find('dist/emulator/main.js')!;
  const service = find('dist/lib/main.js')!;
  seen.push(emulator, service);
  return { proc, emulator, service, output: () => out };
}

/** Resolves with how `p` ended. */
const exited = (p: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) resolve({ code: p.exitCode, signal: p.signalCode });
    else p.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** Items flow through the service: its traffic log has their REQUESTs. */
const itemsFlow = (home: string) => {
  const log = path.join(home, 'Service_PLC.log');
  return until(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('REQU'), 30_000, `REQUESTs in ${log}`, 100);
};

describe('npm run bench ends with its children', () => {
  /** The bench on one long service step, items flowing: its emulator's and service's pids and the service's home. */
  async function benchRunning() {
    const run = await command('dist/bench/run.js', [
      // The service first: the targets run in the order named.
      ...['--quick', '--targets', 'service,baseline', '--rates', '30', '--runs', '1', '--seconds', '120'],
      ...['--no-scale', '--no-storage', '--no-idle'],
    ]);
    const scratch = scratchOf(run.service);
    await itemsFlow(scratch.home);
    return { ...run, bench: run.proc, ...scratch };
  }

  onLinux.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('stopped by %s: exits %d, its emulator and service gone, the home and the sync counter removed', async (signal, status) => {
    const run = await benchRunning();
    run.bench.kill(signal);
    expect(await exited(run.bench)).toEqual({ code: status, signal: null });
    await until(() => !alive(run.emulator) && !alive(run.service), 5000, 'the emulator and the service ended');
    gone(run.home, run.syncCounter);
  });

  const withPython = linux ? itWhen(missingCommands({ python3: 'apt-get install python3' }), 'a terminal that hangs up') : it.skip;
  withPython(
    'run from a terminal that hangs up (SIGHUP, an ssh session dropped): exits 129, its emulator and service gone, the home removed',
    async () => {
      // The bench on a terminal of its own, hung up 8 s after its service step began: items flow by then.
      const hangup = spawn(
        'python3',
        [
          path.join(projectRoot, 'test/fixtures/terminal-hangup.py'),
          'service, FULL',
          '60',
          process.execPath,
          path.join(projectRoot, 'dist/bench/run.js'),
          ...['--quick', '--targets', 'service,baseline', '--rates', '30', '--runs', '1', '--seconds', '120'],
          ...['--no-scale', '--no-storage', '--no-idle'],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HANGUP_DELAY_S: '8' } },
      );
      started.push(hangup);
      let report = '';
      hangup.stdout.on('data', (d) => (report += d));
      const bench = () => childrenOf(hangup.pid!).find((c) => commandOf(c).includes('dist/bench/run.js'));
      const find = (what: string) => {
        const b = bench();
        return b === undefined ? undefined : childrenOf(b).find((c) => commandOf(c).includes(what));
      };
      await until(
        () => find('dist/emulator/main.js') !== undefined && find('dist/lib/main.js') !== undefined,
        30_000,
        'the emulator and the service of the bench on a terminal',
      );
      const emulator = find('dist/emulator/main.js')!;
      const service = find('dist/lib/main.js')!;
      seen.push(emulator, service);
      const { home, syncCounter } = scratchOf(service);
      expect(await exited(hangup)).toEqual({ code: 0, signal: null });
      const ended = JSON.parse(report) as { marker: boolean; exit: number | null; signal: number | null; hung: boolean };
      expect(ended).toMatchObject({ marker: true, exit: 129, signal: null, hung: false });
      await until(() => !alive(emulator) && !alive(service), 5000, 'the emulator and the service ended');
      gone(home, syncCounter);
    },
  );

  onLinux('failing mid-step (its service killed): exits 1 saying why, its emulator gone', async () => {
    const run = await benchRunning();
    process.kill(run.service, 'SIGKILL');
    const end = await exited(run.bench);
    expect(end).toEqual({ code: 1, signal: null });
    // Its last words may still be in the pipe when it has exited.
    const failed = /bench failed: Error: service, .* exited in the middle of its step \(SIGKILL\)/;
    await until(() => failed.test(run.output()), 5000, 'the bench says why it failed').catch(() => {});
    expect(run.output()).toMatch(failed);
    await until(() => !alive(run.emulator), 5000, 'the emulator ended');
    gone(run.home, run.syncCounter);
  });
});

describe('npm run wal-pages ends with its children', () => {
  onLinux('stopped by SIGTERM while items flow: exits 143, its children gone, its page log, home and sync counter removed', async () => {
    const run = await command('dist/bench/wal-pages.js', ['--rate', '30', '--seconds', '120']);
    const { home, syncCounter } = scratchOf(run.service);
    await itemsFlow(home);
    // The log of every WAL frame the service writes (in memory, under /dev/shm, where there is one).
    const pageLog = path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `wal-pages-${run.proc.pid}.log`);
    expect(fs.statSync(pageLog).size).toBeGreaterThan(0);
    run.proc.kill('SIGTERM');
    expect(await exited(run.proc)).toEqual({ code: 143, signal: null });
    await until(() => !alive(run.emulator) && !alive(run.service), 5000, 'the emulator and the service ended');
    gone(pageLog, home, syncCounter);
  });
});

describe('npm run demo ends with its children', () => {
  const freePort = () =>
    new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });

  onLinux('stopped by SIGTERM while items flow: exits 143, its emulator and service gone', async () => {
    const port = await freePort();
    const run = await command('dist/examples/demo.js', ['--duration', '120', '--port', String(port)]);
    await itemsFlow(path.join(projectRoot, 'demo'));
    run.proc.kill('SIGTERM');
    expect(await exited(run.proc)).toEqual({ code: 143, signal: null });
    await until(() => !alive(run.emulator) && !alive(run.service), 5000, 'the emulator and the service ended');
    // The port is free again for the next demo.
    await new Promise<void>((resolve, reject) => {
      const server = net
        .createServer()
        .once('error', reject)
        .listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  });

  onLinux('failing to start its service (the port taken): exits 1 saying why, its emulator gone', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const proc = spawn(process.execPath, [path.join(projectRoot, 'dist/examples/demo.js'), '--duration', '120', '--port', String(port)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(proc);
      let out = '';
      proc.stdout.on('data', (d) => (out += d));
      proc.stderr.on('data', (d) => (out += d));
      // The emulator starts first; the demo's children are looked at until it has exited.
      const children = new Map<number, string>();
      // The latest command line read wins: a child read between its fork and its exec shows the demo's.
      const watch = setInterval(() => {
        for (const c of childrenOf(proc.pid!)) {
          const cmd = commandOf(c);
          if (cmd) children.set(c, cmd);
        }
      }, 20);
      const end = await exited(proc).finally(() => clearInterval(watch));
      seen.push(...children.keys());
      expect(end).toEqual({ code: 1, signal: null });
      expect(out).toMatch(/demo failed: .*main\.js exited with 78/);
      expect([...children.values()].some((cmd) => cmd.includes('dist/emulator/main.js'))).toBe(true);
      await until(() => [...children.keys()].every((c) => !alive(c)), 5000, 'the emulator ended');
    } finally {
      taken.close();
    }
  });
});
