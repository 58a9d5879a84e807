/**
 * `npm run wal-pages -- [--rate N] [--seconds N] [--fsync-delay-ms N] [--service-config JSON]`: where an item's bytes go
 * (docs/performance.md, "What it writes to the disk"). Runs the emulator at the rate, the service
 * (`Synchronous` FULL) with the preloaded shim logging every WAL frame header, every write to the
 * database file (a checkpoint) and every sync (bench/slow-fsync.c, SORTER_PAGELOG_FILE), and the
 * reference client. Then it names the B-tree (table or index) of each page from SQLite's `dbstat`
 * and prints, per item: the frames each B-tree wrote, the commits and syncs, and the 4 KB blocks
 * of the WAL each sync dirtied (what the kernel writes: a block rewritten after a sync is written
 * again), and the decision round trip the emulator measured (its REQUEST to its assignment), with
 * every sync `--fsync-delay-ms` slower if asked, and the bytes of the database file the history
 * tables and their indexes hold per item. Checks that nothing was lost or duplicated. Last line:
 * `WAL-PAGES {json}`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runWcsClient } from '../examples/wcs-client';
import Database, { pragmaNumber } from '../db/sqlite';
import { commandLine, nonNegative } from '../lib/process/command-line';
import { endWithTheBench, parseServiceConfig, removeWithTheBench, pidOf, sleep, startEmulator, startTarget, writeBytes } from './processes';
import { projectRoot } from '../lib/process/paths';
import { HELPER_THREAD_NICE, lowerHelperThreadsAtStart } from '../lib/process/thread-priority';
import { byBtree, readPageLog } from './page-log';
import { errorMessage } from '../lib/process/errors';

const args = commandLine('wal-pages', 'npm run wal-pages -- [options]   (docs/performance.md)', {
  rate: { type: 'string', default: '30' },
  seconds: { type: 'string', default: '6' },
  'fsync-delay-ms': { type: 'string', default: '0' },
  'service-config': { type: 'string' },
});
const rate = nonNegative('wal-pages', 'rate', args.rate);
const seconds = nonNegative('wal-pages', 'seconds', args.seconds);
const fsyncDelayMs = nonNegative('wal-pages', 'fsync-delay-ms', args['fsync-delay-ms']);
const serviceConfig = parseServiceConfig('wal-pages', args['service-config']);
if (rate === 0 || seconds === 0) {
  console.error('wal-pages: --rate and --seconds take positive numbers (--help lists the options)');
  process.exit(2);
}

/** The database file after the run: its page size, the B-tree (table or index) of each page, and the bytes of the history's pages. */
function fileLayout(file: string): { pageSize: number; owner: Map<number, string>; historyBytes: number } {
  const db = new Database(file, { readonly: true });
  try {
    const pageSize = pragmaNumber(db, 'page_size');
    const owner = new Map(
      db
        .prepare<[], { pageno: number; name: string }>('SELECT pageno, name FROM dbstat')
        .all()
        .map((r) => [r.pageno, r.name]),
    );
    // What the history keeps of an item in the file: its tables' and their indexes' pages.
    const historyBytes =
      db
        .prepare<[], { bytes: number | null }>(
          "SELECT sum(b.pgsize) AS bytes FROM dbstat b JOIN sqlite_schema s ON s.name = b.name WHERE s.tbl_name IN ('delivered_history', 'outbox_history')",
        )
        .get()?.bytes ?? 0;
    return { pageSize, owner, historyBytes };
  } finally {
    db.close();
  }
}

/** The shim's log lines written between two sizes of its file. */
function readSlice(file: string, from: number, to: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(to - from);
    fs.readSync(fd, buf, 0, buf.length, from);
    return buf.toString('latin1');
  } finally {
    fs.closeSync(fd);
  }
}

/** What a reader looks at first, on stderr: the per-item figures and the B-trees that wrote them. */
function printSummary(r: {
  items: number;
  page_size: number;
  decision_p50_ms: number | null;
  decision_p99_ms: number | null;
  commits_per_item: number;
  syncs_per_item: number;
  wal_frames_per_item: number;
  wal_kb_per_item_written: number;
  wal_blocks_dirtied_per_item: number;
  checkpoint_blocks_dirtied_per_item: number;
  process_kb_per_item: number;
  history_bytes_per_item: number;
  frames: Array<{ btree: string; frames_per_item: number }>;
  checkpoint_pages: Array<{ btree: string; pages_per_item: number }>;
}): void {
  const out = process.stderr;
  out.write(
    `${r.items} items at ${rate}/s, ${r.page_size}-byte pages${fsyncDelayMs ? `, every sync ${fsyncDelayMs} ms slower` : ''}${serviceConfig ? `, ${JSON.stringify(serviceConfig)}` : ''}; decision p50 ${r.decision_p50_ms} ms, p99 ${r.decision_p99_ms} ms\n`,
  );
  out.write(
    `per item: ${r.commits_per_item} commits, ${r.syncs_per_item} syncs, ${r.wal_frames_per_item} WAL frames (${r.wal_kb_per_item_written} KB in write calls), ${r.wal_blocks_dirtied_per_item} WAL blocks of 4 KB dirtied between syncs, ${r.checkpoint_blocks_dirtied_per_item} by checkpoints; the process: ${r.process_kb_per_item} KB; the history keeps ${r.history_bytes_per_item} bytes of the file\n`,
  );
  out.write('WAL frames per item by B-tree:\n');
  for (const f of r.frames) out.write(`  ${f.btree.padEnd(36)} ${f.frames_per_item.toFixed(2)}\n`);
  out.write('pages copied back by checkpoints per item:\n');
  for (const c of r.checkpoint_pages.slice(0, 8)) out.write(`  ${c.btree.padEnd(36)} ${c.pages_per_item.toFixed(2)}\n`);
}

/** One run: the emulator at the rate, the service with the page log, the reference client; what each measured. */
async function run(logFile: string) {
  const emu = await startEmulator(rate, seconds, 60);
  const t = await startTarget('service', emu.port, fsyncDelayMs, {
    serviceRoot: projectRoot,
    serviceConfig,
    env: { SORTER_PAGELOG_FILE: logFile },
  });
  const { syncs: counter, home } = t;
  if (!counter || !home) throw new Error('wal-pages: a service target has its home and its sync counter');
  const client = runWcsClient({ base: t.base, loops: 4, timeOut: 1 });
  // From before the first item (the database is made and migrated by then) to after the last.
  await sleep(500);
  const from = fs.statSync(logFile).size;
  const written0 = writeBytes(pidOf(t.proc));
  const syncs0 = counter.total();
  const emuStats = await emu.stats;
  await sleep(1000); // the last VERIFY handed out and its removal committed
  const to = fs.statSync(logFile).size;
  const written = writeBytes(pidOf(t.proc)) - written0;
  const syncs = counter.total() - syncs0;
  const wcs = await client.stop();
  t.proc.kill('SIGTERM');
  await new Promise((r) => t.proc.once('exit', r));
  counter.dispose();
  return { emuStats, wcs, home, from, to, written, syncs };
}

async function main() {
  endWithTheBench();
  // As in bench/run.ts: the client's own V8 compiling must not take the service's cores.
  await lowerHelperThreadsAtStart(HELPER_THREAD_NICE);
  const logFile = path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `wal-pages-${process.pid}.log`);
  fs.writeFileSync(logFile, '');
  removeWithTheBench(logFile); // in /dev/shm: memory until the next boot, if an interrupted run left it
  const { emuStats, wcs, home, from, to, written, syncs } = await run(logFile);
  const { pageSize, owner, historyBytes } = fileLayout(path.join(home, 'data/sorter.db'));
  const log = readPageLog(readSlice(logFile, from, to), pageSize);
  fs.rmSync(logFile, { force: true });
  fs.rmSync(home, { recursive: true, force: true });

  const items = emuStats.sorted_as_assigned;
  const perItem = (n: number) => Math.round((n / items) * 100) / 100;
  const frames = byBtree(log.frames, owner).map(([name, n]) => ({ btree: name, frames_per_item: perItem(n) }));
  const copied = byBtree(log.copied, owner).map(([name, n]) => ({ btree: name, pages_per_item: perItem(n) }));
  const lost = emuStats.inducted - wcs.verified.size;
  const duplicates = wcs.duplicate_requests + wcs.duplicate_verifies;
  const result = {
    rate,
    seconds,
    fsync_delay_ms: fsyncDelayMs,
    service_config: serviceConfig ?? null,
    page_size: pageSize,
    items,
    lost,
    duplicates,
    commits_per_item: perItem(log.commits),
    syncs_per_item: perItem(syncs),
    wal_frames_per_item: perItem([...log.frames.values()].reduce((a, b) => a + b, 0)),
    wal_kb_per_item_written: Math.round((([...log.frames.values()].reduce((a, b) => a + b, 0) * (24 + pageSize)) / 1024 / items) * 10) / 10,
    wal_blocks_dirtied_per_item: perItem(log.walBlocks),
    checkpoint_blocks_dirtied_per_item: perItem(log.dbBlocks),
    process_kb_per_item: Math.round((written / 1024 / items) * 10) / 10,
    history_bytes_per_item: Math.round(historyBytes / items),
    decision_p50_ms: emuStats.decision_p50_ms ?? null,
    decision_p99_ms: emuStats.decision_p99_ms ?? null,
    frames,
    checkpoint_pages: copied,
  };
  printSummary(result);
  console.log(`WAL-PAGES ${JSON.stringify(result)}`);
  if (lost !== 0 || duplicates !== 0) {
    process.stderr.write(`wal-pages: ${lost} items lost and ${duplicates} duplicates: the figures do not count\n`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(`wal-pages: ${errorMessage(err)}`);
  process.exit(1);
});
