// The scale probes of the benchmark: pop latency on a long queue, and seeding a large CSV.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../db/connection';
import { createQueueStore } from '../db/queue-store';
import { CSV_COLUMNS } from '../lib/testmode/replay';
import { dist, median, start } from './processes';
import { sampleRequest } from './sample-item';
import { slowFsyncEnv } from './slow-disk';

/** Pop latency (head + remove, one transaction) on a queue of `rows` messages; median µs. */
export function popMicros(rows: number): number {
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
  return median(samples);
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
