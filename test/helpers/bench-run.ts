// Test helper: the end of a run of the bench's own processes (bench/processes.ts) in a test, passed
// or failed: the reference client stopped, the target and the emulator killed, the target's home
// and its sync counter gone.
import type { WcsClient } from '../../examples/wcs-client';
import { type BenchEmulator, type StartedTarget, disposeTarget } from '../../bench/processes';

export async function endBenchRun(client: WcsClient, target: StartedTarget, emu: BenchEmulator): Promise<void> {
  await client.stop();
  target.proc.kill('SIGKILL');
  emu.proc.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 100));
  disposeTarget(target);
}
