// Test helper: the bench in a test. `npm run bench` run whole, as a user runs it; and the end of a
// run of the bench's own processes (bench/processes.ts), passed or failed: the reference client
// stopped, the target and the emulator killed, the target's home and its sync counter gone.
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { WcsClient } from '../../examples/wcs-client';
import { type BenchEmulator, type StartedTarget, disposeTarget } from '../../bench/processes';
import { projectRoot } from '../../lib/process/paths';

/** The bench's whole run (the built dist/bench/run.js): its exit code and what it printed. SIGTERM at the limit ends it with its children. */
export const runBench = (args: string[]) =>
  new Promise<{ code: number | null; out: string }>((resolve) => {
    const options = { cwd: projectRoot, timeout: 150_000, killSignal: 'SIGTERM' as const, maxBuffer: 16 * 2 ** 20 };
    const child = execFile(process.execPath, [path.join(projectRoot, 'dist/bench/run.js'), ...args], options, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: `${stdout}${stderr}` });
    });
    child.stdin?.end();
  });

export async function endBenchRun(client: WcsClient, target: StartedTarget, emu: BenchEmulator): Promise<void> {
  await client.stop();
  target.proc.kill('SIGKILL');
  emu.proc.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 100));
  disposeTarget(target);
}
