// Test-mode seeding on a real SQLite file: good rows load, bad rows are skipped and reported,
// and a file full of bad rows does not flood the log.
import { createQueueStore } from '../../../db/queue-store';
import { seedFromReplay } from '../../../lib/testmode/seed';
import { freshDb } from '../../helpers/db';
import { csv, removeHome, requestRow, tempHome } from '../../helpers/home';
import { capturingLogger } from '../../helpers/log';

describe('seedFromReplay', () => {
  it('loads the good rows of a file of 10,000 bad ones, logging the first 20 and one summary line', async () => {
    const bad = Array.from({ length: 10_000 }, (_, i) => `REQUEST,x${i},IND01,${i},B,,,,,0,,,,,`);
    const home = tempHome({ 'Service_PLC.csv': csv(requestRow('0000001'), ...bad, requestRow('0000002')) });
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const { log, lines } = capturingLogger();
    const summary = await seedFromReplay(
      home,
      { clearQueues: async () => store.clearQueues(), enqueue: async (m, at) => store.enqueue(m, at) },
      log,
      () => new Date(),
    );
    expect(summary).toMatchObject({ RowsLoaded: 2, RowsSkipped: 10_000, Error: null });
    expect(store.depth('sortation')).toBe(2);
    await new Promise((r) => setTimeout(r, 50));
    const skipped = lines.filter((l) => l.msg.startsWith('replay row skipped'));
    expect(skipped).toHaveLength(20);
    expect(lines.filter((l) => /9980 more rows skipped/.test(l.msg))).toHaveLength(1);
    expect(lines.length).toBeLessThan(30);
    ctx.dispose();
    removeHome(home);
  });
});
