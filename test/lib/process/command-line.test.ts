// The commands' option parsing (lib/process/command-line.ts) in this process: what it returns,
// and the usage and exit code of --help and of a bad option. process.exit and the two output
// streams are caught for the test (test/e2e/commands.test.ts runs the real commands).
import { commandLine, nonNegative } from '../../../lib/process/command-line';

class Exited extends Error {
  constructor(readonly code: number | undefined) {
    super(`exit ${code}`);
  }
}

/** Run `fn` with process.exit and stdout/stderr caught: what it returned or its exit code, and what it wrote. */
function caught<T>(fn: () => T): { value?: T; code?: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const exit = jest.spyOn(process, 'exit').mockImplementation((code) => {
    throw new Exited(code as number);
  });
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  try {
    return { value: fn(), stdout, stderr };
  } catch (e) {
    if (e instanceof Exited) return { code: e.code, stdout, stderr };
    throw e;
  } finally {
    exit.mockRestore();
    out.mockRestore();
    err.mockRestore();
  }
}

const options = {
  port: { type: 'string', default: '2000' },
  rate: { type: 'string', default: '10' },
  verbose: { type: 'boolean', default: false },
} as const;
const USAGE =
  'usage: npm run tool -- [options]\noptions:\n  --port <value>  (default 2000)\n  --rate <value>  (default 10)\n  --verbose\n  --help\n';

describe('commandLine', () => {
  it('returns the values, defaults filled in', () => {
    expect(caught(() => commandLine('tool', 'npm run tool -- [options]', options, ['--rate', '25', '--verbose']))).toEqual({
      value: { port: '2000', rate: '25', verbose: true },
      stdout: '',
      stderr: '',
    });
  });

  it('--help prints the usage with each default to stdout and exits 0', () => {
    expect(caught(() => commandLine('tool', 'npm run tool -- [options]', options, ['--help']))).toEqual({
      code: 0,
      stdout: USAGE,
      stderr: '',
    });
  });

  it('an unknown option, a missing value or a positional: one line naming it, the usage, exit 2', () => {
    for (const argv of [['--speed', '3'], ['--port'], ['extra']]) {
      const r = caught(() => commandLine('tool', 'npm run tool -- [options]', options, argv));
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const [first, ...rest] = r.stderr.split('\n');
      expect(first).toMatch(/^tool: .*(--speed|--port|extra)/);
      expect(rest.join('\n')).toBe(USAGE);
    }
  });
});

describe('nonNegative', () => {
  it('a number of 0 or more is returned as a number', () => {
    expect(
      caught(() => [nonNegative('tool', 'rate', '0'), nonNegative('tool', 'rate', '2.5'), nonNegative('tool', 'rate', ' 7 ')]),
    ).toEqual({ value: [0, 2.5, 7], stdout: '', stderr: '' });
  });

  it('anything else says which option and what it got, and exits 2', () => {
    for (const [value, shown] of [
      ['-1', '"-1"'],
      ['ten', '"ten"'],
      ['', '""'],
      [undefined, 'undefined'],
      ['Infinity', '"Infinity"'],
    ] as const) {
      expect(caught(() => nonNegative('tool', 'rate', value))).toEqual({
        code: 2,
        stdout: '',
        stderr: `tool: --rate must be a non-negative number, got ${shown} (--help lists the options)\n`,
      });
    }
  });
});
