// The project's commands as a user types them: `--help` prints the usage and exits 0; an unknown
// option, a missing value or a value that is not a number is one line naming the problem, then
// the usage, exit 2, never a stack trace.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dist = (p: string) => path.resolve(__dirname, '../../dist', p);
const run = (script: string, args: string[]) => spawnSync(process.execPath, [dist(script), ...args], { encoding: 'utf8', timeout: 10_000 });

const commands = [
  { name: 'emulator', script: 'emulator/main.js', option: '--rate' },
  { name: 'wcs-client', script: 'examples/wcs-client.js', option: '--loops' },
  { name: 'demo', script: 'examples/demo.js', option: '--duration' },
  { name: 'bench', script: 'bench/run.js', option: '--fsync-delay-ms' },
  { name: 'wal-pages', script: 'bench/wal-pages.js', option: '--rate' },
];

describe.each(commands)('npm run $name', ({ name, script, option }) => {
  it('--help prints the usage, with the options, and exits 0', () => {
    const r = run(script, ['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run /);
    expect(r.stdout).toContain(option);
    expect(r.stderr).toBe('');
  });

  it.each([
    [['--no-such-option'], /Unknown option '--no-such-option'/],
    [[option], /argument missing/],
    [[`${option}=lots`], new RegExp(`${option} must be a non-negative number, got "lots"`)],
  ])('%j: one line saying why, the usage, exit 2', (args, why) => {
    const r = run(script, args);
    expect(r.status).toBe(2);
    const [first] = r.stderr.split('\n');
    expect(first).toMatch(new RegExp(`^${name}: `));
    expect(first).toMatch(why);
    expect(r.stderr).toMatch(/usage: npm run |--help lists the options/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(r.stdout).toBe('');
  });
});

describe('the service (dist/lib/main.js)', () => {
  it('an option it does not know (--home: the home comes from SORTER_HOME) is one line saying why, the usage, exit 2, before anything is opened', () => {
    const r = spawnSync(process.execPath, [dist('lib/main.js'), '--home', '/tmp/elsewhere'], {
      encoding: 'utf8',
      timeout: 10_000,
      env: { ...process.env, SORTER_HOME: '/nonexistent/sorter-home' },
    });
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/^sorter-integration: Unknown option '--home'/);
    expect(r.stderr).toContain('SORTER_HOME=DIR');
    expect(r.stdout).toBe('');
  });

  it('--help prints the usage and exits 0', () => {
    const r = spawnSync(process.execPath, [dist('lib/main.js'), '--help'], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: SORTER_HOME=DIR node dist\/lib\/main.js \[--default-home DIR\]/);
  });
});

describe('npm run bench -- --warmup-s', () => {
  it('is listed, and a value that is not a number is one line saying why, exit 2', () => {
    expect(run('bench/run.js', ['--help']).stdout).toContain('--warmup-s');
    const r = run('bench/run.js', ['--warmup-s=-3']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/^bench: --warmup-s must be a non-negative number, got "-3"/);
  });
});

describe('npm run bench -- --service-config', () => {
  it.each([['CommitWindowMs=30'], ['[30]'], ['30']])('%s (not a JSON object): one line saying why, exit 2', (value) => {
    const r = run('bench/run.js', ['--service-config', value]);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(/^bench: --service-config takes a JSON object of config.json settings/);
    expect(r.stdout).toBe('');
  });
});

describe('npm run emulator -- --decision-log', () => {
  it('a file it cannot write is one line saying why, exit 2, before it listens', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-emulator-flags-'));
    try {
      const file = path.join(dir, 'a-file');
      fs.writeFileSync(file, '');
      const r = run('emulator/main.js', ['--port', '0', '--decision-log', path.join(file, 'decisions.csv')]);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^emulator: --decision-log takes a file it can write; .*a-file\/decisions\.csv: /);
      expect(r.stdout).toBe('');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
