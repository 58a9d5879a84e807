// `npm run bench -- --decision-log DIR`: each run's emulator writes every sample of its decision
// figures to DIR/NNN-TARGET-RATE.csv (when its REQUEST was sent, the decision in ms, the pass), so
// that a run's slow decisions can be placed in time: the first second after a start, a collection,
// a stall. The bench's own step, run twice against the service.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { medianStep } from '../../bench/step';
import { projectRoot } from '../../lib/process/paths';
import { decisionLogRows } from '../helpers/emulator';

jest.setTimeout(90_000);

describe('npm run bench -- --decision-log DIR', () => {
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-decision-log-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes each run's decision samples to a file of its own, the same samples its figures come from", async () => {
    const lines: string[] = [];
    const ctx = { runs: 2, clientLoops: 2, serviceRoot: projectRoot, decisionLogDir: dir, log: (l: string) => lines.push(l) };
    // 2 s of items at 10 a second, each run a fresh emulator and service.
    const r = await medianStep(ctx, 'service', 10, 2);
    expect(r.lost).toBe(0);
    expect(r.duplicated).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['001-service-10.csv', '002-service-10.csv']);
    const runs = ['001-service-10.csv', '002-service-10.csv'].map((f) => decisionLogRows(fs.readFileSync(path.join(dir, f), 'utf8')));
    for (const rows of runs) {
      // Every item inducted got its decision on its first pass: one sample each, in the 2 s of inducting.
      expect(rows.length).toBeGreaterThanOrEqual(15);
      for (const [at, ms, pass] of rows) {
        expect(at).toBeGreaterThanOrEqual(0);
        expect(at).toBeLessThan(2.5);
        expect(ms).toBeGreaterThan(0);
        expect(ms).toBeLessThan(1500);
        expect(pass).toBe(0);
      }
    }
    // The step's decision maximum is the runs' median (of two, the higher): the higher of the logs' maxima.
    const maxima = runs.map((rows) => Math.max(...rows.map(([, ms]) => ms)));
    expect(r.decisionMax).toBeCloseTo(Math.max(...maxima), 1);
    expect(lines.some((l) => l.includes('rate    10/s'))).toBe(true);
  });
});
