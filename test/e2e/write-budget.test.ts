// What an item costs the storage (issue 22, docs/performance.md "What it writes to the disk"): a
// small fixed workload through the real service process, its bytes written and its disk syncs
// counted, not timed. It fails when a change makes an item write about twice what it does now,
// so that a box's flash storage does not quietly wear out twice as fast.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PAGE_SIZE } from '../../db/connection';
import { SyncCounter } from '../../bench/slow-disk';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { itWhen, missingCommands } from '../helpers/tools';

jest.setTimeout(90_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The budget per item: about 1.5 times what this workload measures (8.3 KB and 0.38 syncs an item
 * with 512-byte pages, messages handed out before their commit, a POST's entry answered on the
 * sorter's ACK and the 100 ms commit window, on a busy 2-core machine; docs/performance.md). With
 * the 50 ms window it measured 10.6 KB and 0.67 syncs, and fails on its syncs; with POSTs synced
 * (DurableBySorterAck false) 14.5 KB and 1.17 syncs; handed out only once committed with the 5 ms
 * window, 17.7 KB and 2.27 syncs; the service before the writer committed only the durable writes
 * with a sync, 45 KB and 4.1 syncs. This catches a change that makes the storage wear out much
 * faster; npm run wal-pages shows the small ones.
 */
const BUDGET = { kbPerItem: 12.5, syncsPerItem: 0.6 };

/** Bytes the process has caused to be written (write_bytes of /proc/<pid>/io, all its threads). */
const writeBytes = (pid: number) => Number(/^write_bytes:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);

const needs =
  process.platform === 'linux' && fs.existsSync(`/proc/${process.pid}/io`)
    ? missingCommands({ [process.env.CC ?? 'cc']: 'apt-get install gcc' })
    : { '/proc/<pid>/io': 'Linux with per-process I/O accounting' };

describe('the write budget per item', () => {
  let home = '';
  let syncs: SyncCounter | undefined;
  afterEach(() => {
    removeHome(home);
    syncs?.dispose();
  });

  /** Run the workload (the emulator's destinations `capacity` items each, emptied after `emptyAfterMs`) and check the budget. */
  async function measure(capacity: number, emptyAfterMs: number, label: string): Promise<void> {
    const emu = await startEmulator([
      '--port',
      '0',
      '--rate',
      '30',
      '--duration',
      '6',
      '--seed',
      '11',
      '--capacity',
      String(capacity),
      '--empty-after-ms',
      String(emptyAfterMs),
      '--start-when-connected',
      '1500',
      '--drain-timeout',
      '30',
    ]);
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        Synchronous: 'FULL',
        Sorter: { Host: '127.0.0.1', Port: emu.port, TrafficLog: true },
      },
    });
    syncs = new SyncCounter();
    const svc = await startServiceProcess(home, syncs.env);
    const client = runWcsClient({ base: svc.base, loops: 4, timeOut: 1 });
    // Counted from before the first item (the database is made and migrated by then).
    await sleep(500);
    const bytes0 = writeBytes(svc.proc.pid!);
    const syncs0 = syncs.total();
    const stats = await emu.stats;
    await sleep(1000); // the last VERIFY handed out and its removal committed
    const bytes = writeBytes(svc.proc.pid!) - bytes0;
    const synced = syncs.total() - syncs0;
    const wcs = await client.stop();
    await svc.stop();

    const items = stats.sorted_as_assigned;
    expect(items).toBeGreaterThanOrEqual(150);
    expect(wcs.verified.size).toBe(stats.inducted); // nothing lost
    expect(wcs.duplicate_requests + wcs.duplicate_verifies).toBe(0);
    const kbPerItem = bytes / 1024 / items;
    const syncsPerItem = synced / items;
    process.stderr.write(
      `write budget${label}: ${items} items, ${stats.scans} SCANs, ${wcs.destination_settings_posted} settings posted, ${kbPerItem.toFixed(1)} KB and ${syncsPerItem.toFixed(2)} syncs an item\n`,
    );
    expect(kbPerItem).toBeLessThanOrEqual(BUDGET.kbPerItem);
    expect(syncsPerItem).toBeLessThanOrEqual(BUDGET.syncsPerItem);
  }

  itWhen(needs, 'the write budget (syncs counted by a preloaded shim, compiled with cc)')(
    `30 items/s for 6 s with Synchronous FULL: at most ${BUDGET.kbPerItem} KB and ${BUDGET.syncsPerItem} syncs an item, nothing lost`,
    async () => {
      await measure(100_000_000, 4000, '');
    },
  );

  // The destinations board (migrations/013) is written with every SCAN that changes a tile: here
  // destinations of 8 items fill and are emptied a second later, each fill and each emptying a
  // SCAN (60 SCANs for 180 items, far more than a site's), and the budget still holds: 8.2 to
  // 8.4 KB and 0.46 to 0.47 syncs an item measured (docs/performance.md).
  itWhen(needs, 'the write budget (syncs counted by a preloaded shim, compiled with cc)')(
    'the same with destinations filling and emptied (SCANs on the board): within the same budget',
    async () => {
      await measure(8, 1000, ' with SCANs');
    },
  );

  itWhen(needs, 'the page log (a preloaded shim, compiled with cc)')(
    'npm run wal-pages names the B-tree of every page an item writes, and checks nothing was lost',
    async () => {
      const proc = spawn(process.execPath, [path.resolve(__dirname, '../../dist/bench/wal-pages.js'), '--rate', '20', '--seconds', '3'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (d) => (stdout += d));
      proc.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise((r) => proc.once('close', r)); // its output read to the end: its last line is the figures
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
      const line = stdout.split('\n').find((l) => l.startsWith('WAL-PAGES '))!;
      const r = JSON.parse(line.slice('WAL-PAGES '.length));
      expect(r.items).toBeGreaterThanOrEqual(40);
      expect([r.lost, r.duplicates]).toEqual([0, 0]);
      const btrees = r.frames.map((f: { btree: string }) => f.btree);
      // Every item writes its REQUEST, its assignment and their history.
      expect(btrees).toEqual(expect.arrayContaining(['sortation_queue', 'outbox', 'delivered_history', 'outbox_history']));
      expect(btrees).not.toContain('delivered_history_delivered_at'); // gone with migration 008
      // What the kernel writes is at least what SQLite wrote: each sync rewrites whole 4 KB blocks.
      expect(r.wal_blocks_dirtied_per_item * 4).toBeGreaterThanOrEqual(r.wal_kb_per_item_written);
      expect(stderr).toMatch(/WAL frames per item by B-tree:/);
      // The history keeps each item in the file: its REQUEST and VERIFY as delivered, with their bodies.
      expect(r.page_size).toBe(PAGE_SIZE);
      expect(r.history_bytes_per_item).toBeGreaterThan(300);
    },
  );
});
