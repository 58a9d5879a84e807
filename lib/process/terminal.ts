// The terminal the service was started from, if any (`npm start` in an operator's shell).
import fs from 'node:fs';
import tty from 'node:tty';

/**
 * As a process exits, Node puts back the terminal settings of stdin, stdout and stderr it found at
 * start. On a terminal that has hung up (an ssh session that dropped, a closed window) the terminal
 * refuses, and Node 20 then aborts the process (SIGABRT, and a core where cores are kept) after the
 * service has stopped clean: its supervisor, or the operator's script, sees a crash. So: which of
 * the three were a terminal is noted now, and at exit those that no longer are (hung up) are put
 * on /dev/null: closed, and /dev/null opened in their place (a new file takes the lowest free
 * descriptor), so that no file opened later can take their numbers and receive what is written to
 * stdout. Node leaves a descriptor that is another file alone, and the exit code stays the
 * service's. Nothing else changes: a terminal still there, a pipe or a file is not touched.
 */
export function closeHungUpTerminalAtExit(): void {
  const onTerminal = [0, 1, 2].filter((fd) => tty.isatty(fd));
  if (onTerminal.length === 0) return;
  process.on('exit', () => {
    const hungUp = onTerminal.filter((fd) => !tty.isatty(fd));
    for (const fd of hungUp) {
      try {
        fs.closeSync(fd);
      } catch {
        // Closed already.
      }
    }
    for (let i = 0; i < hungUp.length; i++) {
      try {
        fs.openSync('/dev/null', 'r+');
      } catch {
        // No /dev/null: the descriptors stay closed, which Node leaves alone as well.
      }
    }
  });
}
