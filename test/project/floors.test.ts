// The floors of docs/architecture.md as the dependency checker enforces them
// (.dependency-cruiser.cjs): a small tree with one arrow back up is refused, naming the rule; the
// project's own tree passes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');
// Run on this test's Node (process.execPath), as every process of a test run is (.ci/node-lines).
const depcruise = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

function cruise(cwd: string, dirs: string[]) {
  const r = spawnSync(process.execPath, [depcruise, '--config', path.join(root, '.dependency-cruiser.cjs'), ...dirs], {
    cwd,
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'floors-'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the floors', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('refuse an import from db/ up to lib/, naming the rule', () => {
    const dir = tree({
      'db/store.ts': "import { x } from '../lib/process/config';\nexport const y = x;\n",
      'lib/process/config.ts': 'export const x = 1;\n',
    });
    made.push(dir);
    const r = cruise(dir, ['db', 'lib']);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/no-up-from-db/);
    expect(r.out).toMatch(/db\/store\.ts → lib\/process\/config\.ts/);
  });

  it('refuse a handler imported by frame code, and a circle', () => {
    const dir = tree({
      'lib/http/server.ts': "import { fn } from '../../handlers/status';\nexport const s = fn;\n",
      'handlers/status.ts': 'export const fn = 1;\n',
      'lib/queue/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
      'lib/queue/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
    });
    made.push(dir);
    const r = cruise(dir, ['lib', 'handlers']);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/nothing-imports-a-handler/);
    expect(r.out).toMatch(/no-up-from-http/);
    expect(r.out).toMatch(/no-circles/);
  });

  it('let the project itself through', () => {
    const r = cruise(root, ['lib', 'db', 'handlers', 'model']);
    expect(r.out).toMatch(/no dependency violations found/);
    expect(r.status).toBe(0);
  });
});
