// Child process of the benchmark: seeds a large replay file and reports its time and peak memory.
import path from 'node:path';
import { openDatabase } from '../db/connection';
import { createQueueStore } from '../db/queue-store';
import { createLogger } from '../lib/process/logger';
import { seedFromReplay } from '../lib/testmode/seed';

/** `node dist/bench/seed-probe.js HOME`: seed HOME's replay file into a fresh database; print time and peak memory. */
async function main() {
  const home = process.argv[2];
  if (home === undefined) throw new Error('usage: seed-probe HOME');
  const db = openDatabase(path.join(home, 'data/probe.db'));
  const store = createQueueStore(db);
  const started = performance.now();
  const summary = await seedFromReplay(home, store, createLogger('silent'), () => new Date());
  const seconds = (performance.now() - started) / 1000;
  db.close();
  process.stdout.write(
    `${JSON.stringify({ seconds, rows: summary.RowsLoaded, skipped: summary.RowsSkipped, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
}
void main();
