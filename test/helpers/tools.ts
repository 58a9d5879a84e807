// Test helper: the programs a suite needs beyond npm. On a machine without one, the suite says in
// one line what is missing and how to install it, and its tests are skipped (.ci/run installs all).
import { spawnSync } from 'node:child_process';

/** True when `command` is on the PATH. */
export const hasCommand = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

/** A python3 that can `import requests` (pyenv's or Debian's), or null. */
export function pythonWithRequests(): string | null {
  for (const python of ['python3', '/usr/bin/python3']) if (spawnSync(python, ['-c', 'import requests'], { stdio: 'ignore' }).status === 0) return python;
  return null;
}

/**
 * `it`, or `it.skip` with one line on stderr when something is missing: `missing` maps what is
 * missing to how to get it (Debian package names).
 */
export function itWhen(missing: Record<string, string>, suite: string): jest.It {
  const names = Object.keys(missing);
  if (names.length === 0) return it;
  process.stderr.write(`SKIPPED ${suite}: ${names.map((n) => `${n} is missing (${missing[n]})`).join('; ')}\n`);
  return it.skip;
}

/** What of `commands` is not on the PATH, each with its install hint. */
export function missingCommands(commands: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(commands).filter(([c]) => !hasCommand(c)));
}
