// `npm run bench -- --service-node-args=...`: every service the bench starts runs with the Node
// options given instead of the units' (a site weighing V8's collector on its own box). A preloaded
// probe records each service process's own options, so the test sees what Node really ran with.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBench } from '../helpers/bench-run';

jest.setTimeout(180_000);

describe('the bench with --service-node-args', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-node-args-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('runs each service with the options given, none of the units', async () => {
    const seen = path.join(dir, 'seen.jsonl');
    const probe = path.join(dir, 'probe.js');
    fs.writeFileSync(
      probe,
      `if (require('node:worker_threads').isMainThread) require('node:fs').appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ pid: process.pid, execArgv: process.execArgv }) + '\\n');`,
    );
    const nodeArgs = `--max-semi-space-size=4 --require=${probe}`;
    const plan = [
      '--quick',
      '--targets',
      'baseline,service',
      '--rates',
      '30',
      '--runs',
      '1',
      '--seconds',
      '2',
      '--no-scale',
      '--no-storage',
    ];
    const { code, out } = await runBench([...plan, `--service-node-args=${nodeArgs}`]);
    expect({ code, tail: code === 0 ? '' : out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    expect(out).toContain(
      `the service targets run as node ${nodeArgs} dist/lib/main.js (--service-node-args; the units run bin/sorter-integration, which chooses V8's collector from the CPU)`,
    );
    const line = JSON.parse(/^BENCH (.*)$/m.exec(out)?.[1] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ service_node_args: nodeArgs, lost: 0, duplicated: 0 });
    // The 50 items/s step, the 30 items/s step and the idle probe: a service process each, with the
    // options given (the bench checks them with `node OPTIONS --version`, which loads no module).
    const runs = fs
      .readFileSync(seen, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pid: number; execArgv: string[] });
    expect(new Set(runs.map((r) => r.pid)).size).toBe(runs.length);
    expect(runs.length).toBe(3);
    for (const r of runs) expect(r.execArgv).toEqual(['--max-semi-space-size=4', `--require=${probe}`]);
  });
});
