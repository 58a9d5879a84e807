// The bench's two in-memory baselines (bench/baseline.ts): on bare node:http, and on hapi with the
// service's own joi schemas (`baseline-hapi`, what the framework alone costs). Both must speak the
// contract the ratios are taken against: every item the emulator inducts is sorted as the
// reference client assigned it, and a POST without its Destination is refused 400.
import { runWcsClient } from '../../examples/wcs-client';
import { type Target, startEmulator, startTarget } from '../../bench/processes';
import { projectRoot } from '../../lib/process/paths';
import { endBenchRun } from '../helpers/bench-run';

jest.setTimeout(60_000);

describe.each<Target>(['baseline', 'baseline-hapi'])('the bench target %s', (target) => {
  it('sorts every item as the WCS assigned it, and refuses an assignment without its Destination', async () => {
    // 3 s of items at 10 a second, inducted from a second after the target connects.
    const emu = await startEmulator(10, 3, 10, 0);
    const t = await startTarget(target, emu.port, 0, { serviceRoot: projectRoot });
    const client = runWcsClient({ base: t.base, loops: 2, timeOut: 1 });
    try {
      const stats = await emu.stats;
      expect(stats.inducted).toBeGreaterThanOrEqual(20);
      expect(stats.sorted_as_assigned).toBe(stats.inducted);
      expect(stats.rejected).toBe(0);
      const bad = await fetch(`${t.base}/sortation`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ TrackID: '0004711' }),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { message: string }).message).toMatch(/Destination/);
      const empty = await fetch(`${t.base}/destination?timeOut=0`);
      expect(empty.status).toBe(204);
    } finally {
      await endBenchRun(client, t, emu);
    }
  });
});
