// Test helper: the end of a run of the bench's own processes (bench/processes.ts) in a test, passed
// or failed: the reference client stopped, the target and the emulator killed, the target's home
// and its sync counter gone.
import fs from 'node:fs';
import type { WcsClient } from '../../examples/wcs-client';
import type { BenchEmulator, startTarget } from '../../bench/processes';

export async function endBenchRun(client: WcsClient, target: Awaited<ReturnType<typeof startTarget>>, emu: BenchEmulator): Promise<void> {
  await client.stop();
  target.proc.kill('SIGKILL');
  emu.proc.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 100));
  if (target.home) fs.rmSync(target.home, { recursive: true, force: true });
  target.syncs?.dispose();
}
