// `npm run bench` refuses a malformed flag before it starts anything: one line naming the flag and
// what it takes, and exit 2. Runs the built command (dist/bench/run.js).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LAUNCHER, SERVICE_ENV, SERVICE_NODE_ARGS, parseNodeArgs } from '../../bench/processes';
import { projectRoot } from '../../lib/process/paths';

const bench = (...argv: string[]) =>
  spawnSync(process.execPath, [path.join(projectRoot, 'dist/bench/run.js'), ...argv], { encoding: 'utf8', timeout: 20_000 });

describe('npm run bench, bad flags', () => {
  it.each([['1000'], ['0/10'], ['1000/0'], ['ten/1'], ['']])('--sync-stall %j: exit 2 and what it takes', (value) => {
    const r = bench('--sync-stall', value);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `bench: --sync-stall takes MS/EVERY_S, two positive numbers (a stall of MS milliseconds every EVERY_S seconds), e.g. 1000/10; got ${JSON.stringify(value)}`,
    );
    expect(r.stdout).toBe('');
  });

  it('--sync-stall as long as its period: exit 2', () => {
    const r = bench('--sync-stall', '10000/10');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bench: --sync-stall takes a stall shorter than its period/);
  });

  it.each([['0'], ['101'], ['quarter']])('--service-cpu %j: exit 2 and what it takes', (value) => {
    const r = bench('--service-cpu', value);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bench: --service-cpu takes the percentage of one core the service may use/);
  });

  it('--service-node-args with a word that is not an option: exit 2, nothing started', () => {
    // Given as --service-node-args=VALUE: a separate value starting with "--" would read as a flag.
    const r = bench('--service-node-args=--max-semi-space-size=2 dist/other.js');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `bench: --service-node-args takes Node's options for the service, space-separated (e.g. "--max-semi-space-size=2"; "" for none); "dist/other.js" is not an option`,
    );
    expect(r.stdout).toBe('');
  });

  it('--service-node-args that Node refuses: exit 2 and what Node said, on one line', () => {
    const r = bench('--service-node-args=--single-threaded-gc --no-such-option');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^bench: --service-node-args takes .*; node refused "--single-threaded-gc --no-such-option": .*--no-such-option/,
    );
    expect(r.stdout).toBe('');
  });

  it('--sync-stall without a value: the usage', () => {
    const r = bench('--sync-stall');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bench: .*sync-stall/);
    expect(r.stderr).toMatch(/--sync-stall <value>/);
  });

  it('--card-gb that is not a list of sizes: exit 2 and what it takes', () => {
    const r = bench('--card-gb', '16,big');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('bench: --card-gb takes card sizes in GB, comma-separated (e.g. 16,32,64); got "16,big"');
    expect(r.stdout).toBe('');
  });

  it.each([['ten'], ['-1'], ['']])('--memory-minutes %j: exit 2 and what it takes', (value) => {
    // Given as --memory-minutes=VALUE: a separate "-1" would read as a flag.
    const r = bench(`--memory-minutes=${value}`);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `bench: --memory-minutes must be a non-negative number, got ${JSON.stringify(value)} (--help lists the options)`,
    );
    expect(r.stdout).toBe('');
  });

  it.each([['ten'], ['-1'], ['1.5'], ['']])('--cpu-pairs %j: exit 2 and what it takes', (value) => {
    const r = bench(`--cpu-pairs=${value}`);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`bench: --cpu-pairs takes a whole number of pairs (0: none), e.g. 3; got ${JSON.stringify(value)}`);
    expect(r.stdout).toBe('');
  });

  it('--layout naming no layout file: exit 2 and where it looked', () => {
    const r = bench('--layout', 'no-such-layout');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^bench: --layout no-such-layout: .*names no layout file: looked for .*layouts\/no-such-layout\.json/);
    expect(r.stdout).toBe('');
  });

  it('--layout with a file that is not a layout: exit 2 and its problems on one line', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-layout-')), 'odd.json');
    fs.writeFileSync(file, JSON.stringify({ Name: 'odd' }));
    try {
      const r = bench('--layout', file);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^bench: --layout .*odd\.json: .*"Framing" is required; .*"Telegrams" is required/);
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('--decision-log and --thread-timeline without a folder, or with one they cannot make: exit 2 and what they take', () => {
    const empty = bench('--decision-log=');
    expect(empty.status).toBe(2);
    expect(empty.stderr.trim()).toBe(
      `bench: --decision-log takes a folder for each run's decision samples (a file a run), e.g. /tmp/runs; got ""`,
    );
    const noTimeline = bench('--thread-timeline=');
    expect(noTimeline.status).toBe(2);
    expect(noTimeline.stderr.trim()).toBe(
      `bench: --thread-timeline takes a folder for each run's CPU thread by thread (a file a run), e.g. /tmp/runs; got ""`,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-bench-flags-'));
    try {
      const file = path.join(dir, 'a-file');
      fs.writeFileSync(file, '');
      const under = bench('--decision-log', path.join(file, 'logs'));
      expect(under.status).toBe(2);
      expect(under.stderr.trim().split('\n')).toHaveLength(1);
      expect(under.stderr).toMatch(/^bench: --decision-log takes a folder it can write; .*a-file\/logs: /);
      expect(under.stdout).toBe('');
      const timelineUnder = bench('--thread-timeline', path.join(file, 'threads'));
      expect(timelineUnder.status).toBe(2);
      expect(timelineUnder.stderr).toMatch(/^bench: --thread-timeline takes a folder it can write; .*a-file\/threads: /);
      // A folder that does not exist yet is made.
      const made = bench('--decision-log', path.join(dir, 'new', 'logs'), '--card-gb', 'big');
      expect(made.status).toBe(2); // the bad --card-gb, read after it, stops the bench before anything runs
      expect(made.stderr).toMatch(/^bench: --card-gb /);
      expect(fs.statSync(path.join(dir, 'new', 'logs')).isDirectory()).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--help lists the new options', () => {
    const r = bench('--help');
    expect(r.status).toBe(0);
    for (const o of [
      '--sync-stall <value>',
      '--service-cpu <value>',
      '--service-node-args <value>',
      '--no-idle',
      '--site-rate <value>',
      '--card-gb <value>',
      '--memory-minutes <value>',
      '--cpu-pairs <value>',
      '--layout <value>',
      '--decision-log <value>',
    ])
      expect(r.stdout).toContain(o);
  });
});

describe('the service under the bench', () => {
  it('--service-node-args: the options as Node takes them, space-separated; none for an empty text', () => {
    expect(parseNodeArgs(' --max-semi-space-size=4   --single-threaded-gc ')).toEqual(['--max-semi-space-size=4', '--single-threaded-gc']);
    expect(parseNodeArgs('')).toEqual([]);
    expect(parseNodeArgs('--max-semi-space-size 4')).toMatch(/; "4" is not an option$/);
    expect(parseNodeArgs('--max-semi-space-size=many')).toMatch(/; node refused "--max-semi-space-size=many": .*illegal value/);
  });

  it('runs the service through the launcher npm start and the systemd units run; without one, with its single-threaded options and environment', () => {
    const start: string = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')).scripts.start;
    expect(start).toContain(`${LAUNCHER} --default-home seeds`);
    for (const unit of ['sorter-integration.service', 'sorter-integration@.service']) {
      const lines = fs.readFileSync(path.join(__dirname, '../../deploy', unit), 'utf8').split('\n');
      expect(lines).toContain(`ExecStart=/opt/sorter-integration/${LAUNCHER}`);
    }
    // An older checkout (--service-root) without the launcher runs as its units did: the launcher's
    // choice for less than two cores, and its malloc arenas.
    const launcher = fs.readFileSync(path.join(__dirname, '../..', LAUNCHER), 'utf8');
    expect(launcher).toContain(`*) options='${SERVICE_NODE_ARGS.join(' ')}' ;;`);
    const vars = Object.entries(SERVICE_ENV);
    expect(vars.length).toBeGreaterThan(0);
    for (const [k, v] of vars) expect(launcher).toContain(`export ${k}="\${${k}:-${v}}"`);
  });
});
