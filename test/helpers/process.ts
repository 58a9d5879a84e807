// Test helper: the service as a child process (start, wait for readiness, stop, kill).
import { type ChildProcess, type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { killAtFileEnd } from './children';
import { until } from './until';
import { LAUNCHER } from '../../bench/processes';

/**
 * The service as `npm start` and the systemd units start it: its launcher chooses Node's options
 * (V8's collector from the CPU it may use) and replaces itself with this Node, at the same pid.
 */
export const LAUNCHER_PATH = path.resolve(__dirname, '../..', LAUNCHER);
const COMMAND = ['/bin/sh', LAUNCHER_PATH];
/** The launcher's environment for the service in `home` (the Node running the tests, `env` on top). */
export const launchEnv = (home: string, env: NodeJS.ProcessEnv = {}) => ({
  ...process.env,
  NODE: process.execPath,
  ...env,
  SORTER_HOME: home,
});

/**
 * The service run to its end, as it is deployed (through its launcher): for starts that must be
 * refused (exit 78 and one line) or that end by themselves. Killed after 15 s.
 */
export function runServiceToEnd(home: string): SpawnSyncReturns<string> {
  return spawnSync(COMMAND[0]!, COMMAND.slice(1), {
    env: launchEnv(home),
    encoding: 'utf8',
    timeout: 15000,
  });
}

/** The service running as a child process (the compiled dist/lib/main.js, built by `npm test`). */
export interface ServiceProcess {
  proc: ChildProcess;
  port: number;
  base: string;
  logs: Array<Record<string, unknown>>;
  /**
   * Wait (up to `ms`) until a log line matches `match`, and return the lines that match. The
   * service writes its log without blocking, so a line can come after an HTTP answer sent later:
   * a test that checks a line caused by a request waits for it. The lines before a line that has
   * come have all come (one pipe, in order).
   */
  logLine(match: (line: Record<string, unknown>) => boolean, ms?: number): Promise<Array<Record<string, unknown>>>;
  /** Resolves with the exit code (or signal) once the process has ended and its output has been read. */
  exited: Promise<number | string>;
  /** The last 8 KB the process wrote to stderr (a crash's stack trace). */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Spawn the service with SORTER_HOME=home, its output piped (or its stdout to the descriptor
 * `stdout`), through its launcher as `npm start` and the systemd units run it; killed at the end
 * of the test file if it still runs then. `exited` resolves with its exit code (or signal) once
 * its output has been read to the end.
 */
export function spawnService(
  home: string,
  env: NodeJS.ProcessEnv = {},
  stdout: 'pipe' | number = 'pipe',
): { proc: ChildProcess; exited: Promise<number | string> } {
  const proc = spawn(COMMAND[0]!, COMMAND.slice(1), {
    env: launchEnv(home, env),
    stdio: ['ignore', stdout, 'pipe'],
  });
  killAtFileEnd(proc);
  const exited = new Promise<number | string>((resolve) => {
    // Once its output is read to the end too ('exit' can come before the last lines of the pipes):
    // a test that reads the log after a stop sees every line. At most 2 s after 'exit', should
    // anything else hold the pipes open.
    proc.once('close', (code, signal) => resolve(code ?? signal ?? -1));
    proc.once('exit', (code, signal) => setTimeout(() => resolve(code ?? signal ?? -1), 2000).unref());
  });
  return { proc, exited };
}

/**
 * Start the service with SORTER_HOME=home and wait until it listens. The home's config.json
 * should set Port 0, so the system picks a free port, which is read from the start-up log line.
 */
export function startServiceProcess(home: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 15000): Promise<ServiceProcess> {
  const { proc, exited } = spawnService(home, env);
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-8192)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`service did not start within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code}) before listening; stderr: ${stderr}`));
    });
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      logs.push(entry);
      if (typeof entry.url === 'string') {
        clearTimeout(timer);
        const port = Number(new URL(entry.url).port);
        resolve({
          proc,
          port,
          base: `http://127.0.0.1:${port}`,
          logs,
          async logLine(match, ms = 5000) {
            await until(() => logs.some(match), ms, `a log line matching ${String(match)}`, 20);
            return logs.filter(match);
          },
          exited,
          stderr: () => stderr,
          stop(signal = 'SIGTERM') {
            proc.kill(signal);
            return exited;
          },
        });
      }
    });
  });
}
