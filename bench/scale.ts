// The scale probes of the benchmark: pop latency on a long queue, and seeding a large CSV.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../db/connection';
import { createQueueStore } from '../db/queue-store';
import { SLICE_ROWS, type TableCount, nextTurn } from '../db/table-count';
import { countInSlices } from '../lib/queue/live-counts';
import { CSV_COLUMNS } from '../lib/testmode/replay';
import { dist, median, start } from './processes';
import { sampleRequest } from './sample-item';
import { slowFsyncEnv } from './slow-disk';

/** What counting a queue of `rows` messages costs the main thread (GET /status, a scrape): ms, medians of 5. */
export interface CountCost {
  /** One statement over the whole table, as a short queue is counted. */
  wholeMs: number;
  /** A slice at a time (lib/queue/live-counts.ts): every slice's time together, and the longest slice. */
  slicedMs: number;
  longestSliceMs: number;
}

/**
 * Pop latency (head + remove, one transaction) on a queue of `rows` messages, median µs; and,
 * before the pops, what counting that queue costs.
 */
export async function popMicros(rows: number): Promise<{ popMicros: number; count: CountCost }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pop-'));
  const db = openDatabase(path.join(dir, 'q.db'), { synchronous: 'NORMAL' });
  const store = createQueueStore(db);
  const m = (n: number) => sampleRequest(String(n).padStart(10, '0'));
  const batch = 10_000;
  for (let i = 0; i < rows; i += batch)
    store.enqueue(
      Array.from({ length: Math.min(batch, rows - i) }, (_, k) => m(i + k)),
      new Date().toISOString(),
    );
  const count = await countCost(store.tally('sortation'), rows);
  const samples: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now();
    const head = store.head('sortation', []);
    if (!head) throw new Error('scale: the queue ran empty before its 2,000 pops');
    store.deliver(head, { deliveredAt: 'T', clientAddress: null });
    samples.push((performance.now() - t0) * 1000);
  }
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { popMicros: median(samples), count };
}

/** Count `table` (of `rows` rows) whole and in slices, 5 times each; fails if a count is wrong. */
async function countCost(table: TableCount, rows: number): Promise<CountCost> {
  const whole: number[] = [];
  const sliced: number[] = [];
  const longest: number[] = [];
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now();
    const all = table.whole('[]').rows;
    whole.push(performance.now() - t0);
    const slices: number[] = [];
    let last = performance.now();
    // Each slice's time: from the end of the turn before it to the end of its own statement.
    const counted = await countInSlices(
      { ...table, slice: (ids, from, limit) => ((last = performance.now()), table.slice(ids, from, limit)) },
      () => [],
      SLICE_ROWS,
      async () => {
        slices.push(performance.now() - last);
        await nextTurn();
      },
    );
    slices.push(performance.now() - last);
    if (all !== rows || counted.rows !== rows) throw new Error(`scale: counted ${all} and ${counted.rows} of ${rows} rows`);
    sliced.push(slices.reduce((a, b) => a + b, 0));
    longest.push(Math.max(...slices));
  }
  return { wholeMs: median(whole), slicedMs: median(sliced), longestSliceMs: median(longest) };
}

/** Seed a `rows`-row CSV in a child process; its time and peak memory. */
export async function seedProbe(rows: number): Promise<{ seconds: number; maxRssMb: number; rows: number }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-seed-'));
  const out = fs.createWriteStream(path.join(home, 'Service_PLC.csv'));
  out.write(`${CSV_COLUMNS.join(',')}\n`);
  for (let i = 0; i < rows; i++) {
    const line =
      i % 10 === 9
        ? `SCAN,211,D${String(i % 50).padStart(3, '0')},,,,,,,,Ready,Off,Off,,NONE\n`
        : `REQUEST,210,IND01,${String(i).padStart(10, '0')},4006381333931,320.5,210,95,1.25,0,,,,,\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  const { value } = await start(dist('bench/seed-probe.js'), [home], {}, (l) => (l.startsWith('{') ? JSON.parse(l) : undefined));
  fs.rmSync(home, { recursive: true, force: true });
  return value;
}

/** What the purge of one way measured (bench/purge-probe.ts). */
export interface PurgeWay {
  purged: number;
  seconds: number;
  commitP99BeforeMs: number;
  commitP50Ms: number;
  commitP99Ms: number;
  commitMaxMs: number;
  lost: number;
  duplicated: number;
  olderLeft: number;
  kept: number;
}

/**
 * The hourly history purge under a 50/s stream of sorter messages, on `hours` hours of history at
 * 30 items/s, the oldest `purgeHours` purged: as one transaction (the baseline), in chunks, and as
 * the size bound cuts them (about as many, the cutoff found by their share), in a child process whose fsync takes `fsyncDelayMs` longer.
 */
export async function purgeProbe(
  hours: number,
  purgeHours: number,
  fsyncDelayMs: number,
): Promise<{ rows: number; one: PurgeWay; chunks: PurgeWay; size?: PurgeWay }> {
  const { value } = await start(dist('bench/purge-probe.js'), [String(hours), String(purgeHours)], slowFsyncEnv(fsyncDelayMs), (l) =>
    l.startsWith('{') ? JSON.parse(l) : undefined,
  );
  return value;
}
