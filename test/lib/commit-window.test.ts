// How many sorter telegrams the commit window may hold, from the layout and config.json: the
// writer lets no more wait for company than the sorter may send unacknowledged, so a
// stop-and-wait sorter's telegram never waits for another (db/writer.ts, gatheringOf).
import path from 'node:path';
import { WINDOW_MAX_WRITES } from '../../db/commit-plan';
import { loadLayout } from '../../lib/layout/load';
import { LAYOUTS_DIR, layoutWire } from '../../lib/layout/wire';
import { validateConfig } from '../../lib/process/config';
import { commitWindowWrites } from '../../lib/service';

const wireOf = (name: string) => layoutWire(loadLayout(path.join(LAYOUTS_DIR, `${name}.json`)));

describe('commitWindowWrites', () => {
  it('holds no more sorter telegrams than the sorter may send unacknowledged: one for a stop-and-wait layout, at most 16', () => {
    expect(commitWindowWrites(wireOf('ewm-mfs'), validateConfig({}))).toBe(1);
    expect(commitWindowWrites(wireOf('ewm-mfs'), validateConfig({ Sorter: { Window: 8 } }))).toBe(1);
    expect(commitWindowWrites(wireOf('v1'), validateConfig({}))).toBe(WINDOW_MAX_WRITES);
    expect(commitWindowWrites(wireOf('v1'), validateConfig({ Sorter: { Window: 4 } }))).toBe(4);
  });
});
