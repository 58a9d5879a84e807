// Test helper: the emulator as a child process, with its EMULATOR report.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { killAtFileEnd } from './children';

const MAIN = path.resolve(__dirname, '../../dist/emulator/main.js');

/** The emulator as a child process. */
export interface EmulatorProcess {
  proc: ChildProcess;
  port: number;
  /** The `EMULATOR {json}` counters, once it has exited. */
  stats: Promise<Record<string, number>>;
  stop(): Promise<Record<string, number>>;
}

/** Start `dist/emulator/main.js` with flags; resolves once it listens. */
export function startEmulator(args: string[]): Promise<EmulatorProcess> {
  const proc = spawn(process.execPath, [MAIN, '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  killAtFileEnd(proc);
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  let resolveStats: (s: Record<string, number>) => void;
  const stats = new Promise<Record<string, number>>((r) => (resolveStats = r));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`emulator exited (${code}) before listening: ${stderr}`)));
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      const listening = /^emulator listening on [\d.]+:(\d+)$/.exec(line);
      if (listening) resolve({ proc, port: Number(listening[1]), stats, stop: () => (proc.kill('SIGTERM'), stats) });
      if (line.startsWith('EMULATOR ')) resolveStats(JSON.parse(line.slice('EMULATOR '.length)));
    });
  });
}
