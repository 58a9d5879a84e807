// Children that end with the command that started them: the benchmark and the demo start an
// emulator, a service, a baseline. A terminal's Ctrl-C reaches the children too, but `kill` or a
// CI job's time-out reaches only the command, and a command that fails exits alone: either way
// its children went on running, a service still listening on its port. The service itself starts
// no child process.
import type { ChildProcess } from 'node:child_process';
import { closeHungUpTerminalAtExit } from './terminal';

const running = new Set<ChildProcess>();

/** `proc`, killed when this process exits if it still runs then (once `endChildrenWithThisProcess` was called). */
export function tracked<P extends ChildProcess>(proc: P): P {
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  return proc;
}

/** The signals that end a command, with their numbers: it exits with 128 + the number, as a shell reports it. */
const ENDING_SIGNALS = [
  ['SIGHUP', 1],
  ['SIGINT', 2],
  ['SIGTERM', 15],
] as const;

/**
 * However this process ends from now on (done, failed, or stopped by SIGHUP, SIGINT or SIGTERM),
 * its tracked children are killed (SIGKILL: they are scratch processes, and an exit handler cannot
 * wait for a graceful stop), then `cleanUp` runs. Called once, by a command's entry: the tests
 * that import a command's modules keep their own signal handling.
 */
export function endChildrenWithThisProcess(cleanUp: () => void = () => {}): void {
  // Run from a terminal that hangs up (SIGHUP): the exit code below, not Node's abort at exit.
  closeHungUpTerminalAtExit();
  process.once('exit', () => {
    for (const proc of running) proc.kill('SIGKILL');
    cleanUp();
  });
  for (const [signal, number] of ENDING_SIGNALS) process.once(signal, () => process.exit(128 + number));
}
