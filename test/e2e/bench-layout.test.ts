// `npm run bench -- --layout NAME` runs the service's steps on that layout: the bench's emulator
// speaks it and the service's config.json names it, so items go round only if both do. The
// baseline speaks v1 whatever the flag (bench/step.ts).
import fs from 'node:fs';
import path from 'node:path';
import { runWcsClient } from '../../examples/wcs-client';
import { layoutFile } from '../../lib/layout/site-layout';
import { projectRoot } from '../../lib/process/paths';
import { endBenchRun } from '../helpers/bench-run';
import { startEmulator, startTarget } from '../../bench/processes';

jest.setTimeout(60_000);

describe('the bench on a layout other than v1', () => {
  it('the emulator and the service both speak ewm-mfs: every item inducted is sorted as the WCS assigned it', async () => {
    const layout = layoutFile(process.cwd(), 'ewm-mfs');
    // 3 s of items at 10 a second, inducted from a second after the service connects.
    const emu = await startEmulator(10, 3, 10, 0, layout);
    const t = await startTarget('service', emu.port, 0, { serviceRoot: projectRoot, layout });
    const client = runWcsClient({ base: t.base, loops: 2, timeOut: 1 });
    try {
      const config = JSON.parse(fs.readFileSync(path.join(t.home!, 'config.json'), 'utf8')) as {
        Sorter: { Layout?: string; Port: number };
      };
      expect(config.Sorter).toMatchObject({ Layout: layout, Port: emu.port });
      const stats = await emu.stats;
      expect(stats.inducted).toBeGreaterThanOrEqual(20);
      expect(stats.sorted_as_assigned).toBe(stats.inducted);
      expect(stats.rejected).toBe(0);
      expect(stats.unacknowledged_at_exit).toBe(0);
    } finally {
      await endBenchRun(client, t, emu);
    }
  });
});
