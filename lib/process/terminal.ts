// The terminal the service was started from, if any (`npm start` in an operator's shell).
import fs from 'node:fs';
import tty from 'node:tty';

/**
 * As a process exits, Node puts back the terminal settings of stdin, stdout and stderr it found at
 * start. On a terminal that has hung up (an ssh session that dropped, a closed window) the terminal
 * refuses, and Node 20 then aborts the process (SIGABRT, and a core where cores are kept) after the
 * service has stopped clean: its supervisor, or the operator's script, sees a crash. So: which of
 * the three were a terminal is noted now, and at exit those that no longer are (hung up) are
 * closed. Node leaves a descriptor that is closed alone, and the exit code stays the service's.
 * Nothing else changes: a terminal still there, a pipe or a file is not touched.
 */
export function closeHungUpTerminalAtExit(): void {
  const onTerminal = [0, 1, 2].filter((fd) => tty.isatty(fd));
  if (onTerminal.length === 0) return;
  process.on('exit', () => {
    for (const fd of onTerminal) {
      if (tty.isatty(fd)) continue;
      try {
        fs.closeSync(fd);
      } catch {
        // Closed already.
      }
    }
  });
}
