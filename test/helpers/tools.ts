// Test helper: the programs a suite needs beyond Node and npm. On a machine without one, the test
// file says in one line what is missing and how to install it, and the tests that need it are
// skipped (.ci/run installs everything, so CI runs them all).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCpuLimit } from '../../bench/cpu-limit';

/** What is missing, mapped to how to get it (Debian package names). Empty: nothing is missing. */
export type Missing = Record<string, string>;

/** True when `command` is on the PATH. */
export const hasCommand = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

/** A python3 that can `import requests` (pyenv's or Debian's), or null. */
export function pythonWithRequests(): string | null {
  for (const python of ['python3', '/usr/bin/python3'])
    if (spawnSync(python, ['-c', 'import requests'], { stdio: 'ignore' }).status === 0) return python;
  return null;
}

/** What of `commands` is not on the PATH, each with its install hint. */
export function missingCommands(commands: Missing): Missing {
  return Object.fromEntries(Object.entries(commands).filter(([c]) => !hasCommand(c)));
}

/** Root, for what only root may do (mount a tmpfs); empty when this process is root. */
export function missingRoot(forWhat: string): Missing {
  return process.getuid?.() === 0 ? {} : { root: `run the tests as root to ${forWhat}` };
}

/**
 * The immutable attribute (`chattr +i`), which makes a file read-only for root too: root and
 * chattr (e2fsprogs), on a file system that has the attribute (ext4 has; tmpfs and overlayfs may
 * not). Tried on a file in `dir`. Empty when it works.
 */
export function missingImmutable(dir = os.tmpdir()): Missing {
  const missing = { ...missingRoot('set the immutable attribute'), ...missingCommands({ chattr: 'apt-get install e2fsprogs' }) };
  if (Object.keys(missing).length > 0) return missing;
  const probe = fs.mkdtempSync(path.join(dir, 'sorter-chattr-'));
  const file = path.join(probe, 'probe');
  fs.writeFileSync(file, '');
  try {
    if (spawnSync('chattr', ['+i', file], { stdio: 'ignore' }).status !== 0)
      return { 'chattr +i': `the file system of ${dir} has no immutable attribute (use ext4, or set TMPDIR to a folder on one)` };
    spawnSync('chattr', ['-i', file], { stdio: 'ignore' });
    return {};
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

/** Mounting a small tmpfs (a file system of the test's own to fill): root, and a system that lets it mount. Empty when it works. */
export function missingTmpfsMount(): Missing {
  const missing = missingRoot('mount a small tmpfs');
  if (Object.keys(missing).length > 0) return missing;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-mount-'));
  try {
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' }).status !== 0)
      return { 'a tmpfs mount': 'root on a machine or a privileged container may mount, this one may not' };
    spawnSync('umount', [probe], { stdio: 'ignore' });
    return {};
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

/** A cgroup that limits a process's CPU (`--service-cpu`): root and a cgroup file system with the cpu controller. Empty when one can be made. */
export function missingCpuLimit(): Missing {
  const probe = createCpuLimit(20, `sorter-bench-probe-${process.pid}`);
  if (typeof probe === 'string') return { 'a cpu cgroup': probe };
  probe.remove();
  return {};
}

/** What has been reported missing in this test file (each file loads its own copy of this module). */
const reported = new Set<string>();

/** One line on stderr for what is missing and not yet reported in this file; true if anything is missing. */
function report(missing: Missing, suite: string): boolean {
  const names = Object.keys(missing);
  const fresh = names.filter((n) => !reported.has(n));
  for (const n of fresh) reported.add(n);
  if (fresh.length > 0) process.stderr.write(`SKIPPED ${suite}: ${fresh.map((n) => `${n} is missing (${missing[n]})`).join('; ')}\n`);
  return names.length > 0;
}

/**
 * `it`, or `it.skip` when something is missing: the line naming it and how to install it is
 * written once per test file, however many tests need it.
 */
export function itWhen(missing: Missing, suite: string): jest.It {
  return report(missing, suite) ? it.skip : it;
}

/** `describe`, or `describe.skip` (its hooks do not run either) when something is missing; one line as for itWhen. */
export function describeWhen(missing: Missing, suite: string): jest.Describe {
  return report(missing, suite) ? describe.skip : describe;
}
