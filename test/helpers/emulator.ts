// Test helper: the emulator as a child process, with its EMULATOR report.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { killAtFileEnd } from './children';
import type { EmulatedSorter, SorterStats } from '../../emulator/sorter';
import type { PlcLink } from '../../emulator/plc-link';

const MAIN = path.resolve(__dirname, '../../dist/emulator/main.js');

/** The `EMULATOR {json}` line's figures, as emulator/main.ts puts them together. */
export type EmulatorStats = SorterStats &
  ReturnType<EmulatedSorter['decisionSummary']> &
  PlcLink['counters'] & {
    on_sorter_at_exit: number;
    unacknowledged_at_exit: number;
    oldest_unacknowledged_at_exit: number | null;
    seed: number;
    rate: number;
    inducting_since_ms: number;
  };

/** The emulator as a child process. */
export interface EmulatorProcess {
  proc: ChildProcess;
  port: number;
  /** The `EMULATOR {json}` counters, once it has exited. */
  stats: Promise<EmulatorStats>;
  stop(): Promise<EmulatorStats>;
}

/** Start `dist/emulator/main.js` with flags; resolves once it listens. */
export function startEmulator(args: string[]): Promise<EmulatorProcess> {
  const proc = spawn(process.execPath, [MAIN, '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  killAtFileEnd(proc);
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  let resolveStats: (s: EmulatorStats) => void;
  const stats = new Promise<EmulatorStats>((r) => (resolveStats = r));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`emulator exited (${code}) before listening: ${stderr}`)));
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      const listening = /^emulator listening on [\d.]+:(\d+)$/.exec(line);
      if (listening) resolve({ proc, port: Number(listening[1]), stats, stop: () => (proc.kill('SIGTERM'), stats) });
      if (line.startsWith('EMULATOR ')) resolveStats(JSON.parse(line.slice('EMULATOR '.length)));
    });
  });
}

/**
 * The rows of a decision log (`--decision-log`, EmulatedSorter.decisionLog()), its header checked:
 * [requested_s, decision_ms, recirculations] each.
 */
export function decisionLogRows(csv: string): Array<[number, number, number]> {
  const [header, ...lines] = csv.trimEnd().split('\n');
  expect(header).toBe('requested_s,decision_ms,recirculations');
  return lines.map((line) => line.split(',').map(Number) as [number, number, number]);
}
