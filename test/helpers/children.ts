// Test helper: child processes still running when a test file ends (its test failed before
// stopping them, or a start timed out) are killed, so that one failure does not keep jest from
// exiting. Each test file loads its own copy of this module, so the hook is the file's.
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const proc of running) proc.kill('SIGKILL');
});

/** Kill `proc` at the end of the test file if it is still running then. */
export function killAtFileEnd(proc: ChildProcess): void {
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
}
