// A stalled disk (issue 33; docs/performance.md, "A stalled disk"): an SD card whose flush takes
// seconds now and then. The service runs with the preloaded shim (bench/slow-fsync.c) making one
// sync stall 2 s every few seconds while the emulator inducts 30 items a second and the reference
// client decides. The sorter must get every decision in time (no pass without an assignment), and
// nothing acknowledged may be lost: not to a kill -9 during a stall (committed writes are in the
// page cache), and not to a power cut during a stall beyond the telegrams the service says it
// acknowledged before their sync (AckUnsyncedAfterMs; none with null).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SyncCounter, syncStallEnv } from '../../bench/slow-disk';
import Database from '../../db/sqlite';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { itWhen, missingCommands } from '../helpers/tools';
import { acknowledgedTelegrams } from '../helpers/traffic-acks';

jest.setTimeout(120_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const needs = process.platform === 'linux' ? missingCommands({ [process.env.CC ?? 'cc']: 'apt-get install gcc' }) : { Linux: 'LD_PRELOAD' };

/** A 2 s stall of the disk every 4 s (the shim: the first sync after each 4 s mark, and every sync during it). */
const STALL = { ms: 2000, everyS: 4 };

interface StorageSeen {
  stalled: boolean;
  ackedBeforeSync: number;
}

/** Poll /status every 25 ms until `stop()`; notes whether the storage was seen stalled on the disk, and the early ACKs. */
function watchStorage(svc: ServiceProcess) {
  const seen: StorageSeen = { stalled: false, ackedBeforeSync: 0 };
  const stopping = new AbortController();
  const done = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const s = (await (await fetch(`${svc.base}/status`)).json()) as {
          Storage: { State: string; WaitingFor: string | null; AckedBeforeSync: number };
        };
        if (s.Storage.State === 'Stalled' && s.Storage.WaitingFor === 'Disk') seen.stalled = true;
        seen.ackedBeforeSync = s.Storage.AckedBeforeSync;
      } catch {
        // killed: the last figures stand
      }
      await sleep(25);
    }
  })();
  return {
    seen,
    stop: async () => {
      stopping.abort();
      await done;
      return seen;
    },
  };
}

/** How many telegrams of each type a database (or a copy of one) holds, queued or delivered. */
function stored(dir: string) {
  const db = new Database(path.join(dir, 'sorter.db'));
  const n = (sql: string) => db.prepare(sql).pluck().get() as number;
  const kept = (type: string) =>
    n(`SELECT count(*) FROM sortation_queue WHERE type = '${type}'`) + n(`SELECT count(*) FROM delivered_history WHERE type = '${type}'`);
  const r = {
    REQU: kept('REQUEST'),
    VERI: kept('VERIFY'),
    SCAN: n('SELECT count(*) FROM destination_queue') + n("SELECT count(*) FROM delivered_history WHERE type = 'SCAN'"),
    integrity: db.prepare('PRAGMA integrity_check').pluck().get() as string,
  };
  db.close();
  return r;
}

describe('a disk that stalls for seconds', () => {
  let home = '';
  let snapshots = '';
  let syncs: SyncCounter | undefined;
  afterEach(() => {
    removeHome(home);
    if (snapshots) fs.rmSync(snapshots, { recursive: true, force: true });
    syncs?.dispose();
  });

  const config = (port: number, extra: object = {}) => ({
    TestMode: false,
    Port: 0,
    Host: '127.0.0.1',
    Synchronous: 'FULL',
    Sorter: { Host: '127.0.0.1', Port: port, TrafficLog: true },
    ...extra,
  });

  /** The emulator at 30 items/s for `seconds`, the service on the stalling disk, /status watched, the reference client's `loops`. */
  async function stalledLine(o: { seed: number; seconds: number; drainS: number; loops: number; extra?: object; snapshotDir?: string }) {
    const emu = await startEmulator([
      '--port',
      '0',
      '--rate',
      '30',
      '--duration',
      String(o.seconds),
      '--seed',
      String(o.seed),
      '--capacity',
      '100000000',
      '--start-when-connected',
      '1000',
      '--drain-timeout',
      String(o.drainS),
    ]);
    home = tempHome({ 'config.json': config(emu.port, o.extra) });
    syncs = new SyncCounter(0, o.snapshotDir, STALL);
    const svc = await startServiceProcess(home, syncs.env);
    return { emu, svc, watch: watchStorage(svc), client: runWcsClient({ base: svc.base, loops: o.loops, timeOut: 1 }) };
  }

  /** Until the storage was seen stalled (and, with `early`, more than 20 telegrams acknowledged before their sync), 15 s at most. */
  async function intoAStall(seen: StorageSeen, early: boolean): Promise<void> {
    const until = Date.now() + 15_000;
    while (Date.now() < until && !(seen.stalled && (!early || seen.ackedBeforeSync > 20))) await sleep(50);
    expect(seen.stalled).toBe(true);
  }

  itWhen(needs, 'the stalling disk (a preloaded shim, compiled with cc)')(
    'at 30 items/s every decision comes in time and nothing is lost, stalls and all',
    async () => {
      const { emu, svc, watch, client } = await stalledLine({ seed: 3, seconds: 10, drainS: 5, loops: 4 });
      const sorter = await emu.stats;
      const seen = await watch.stop();
      const wcs = await client.stop();
      await svc.stop('SIGTERM');
      process.stderr.write(`sync stall: ${JSON.stringify({ sorter, seen, wcs: { posted: wcs.assignments_posted } })}\n`);
      // The stalls happened and were seen (a sync in flight over 1 s), and were ridden out.
      expect(seen.stalled).toBe(true);
      expect(seen.ackedBeforeSync).toBeGreaterThan(0);
      expect(sorter.inducted).toBeGreaterThanOrEqual(290);
      expect(sorter.passes_without_assignment).toBe(0);
      expect(sorter.late_assignments).toBe(0);
      expect(sorter.rejected).toBe(0);
      expect(sorter.sorted_as_assigned).toBe(sorter.inducted);
      expect(sorter.unacknowledged_at_exit).toBe(0);
      expect(sorter.decision_p99_ms).toBeLessThan(500);
      // The operators are told of each stall once it ends: how long, and how many telegrams went unsynced.
      const stalls = svc.logs.filter((l) => l.storage === 'Stalled' && typeof l.syncMs === 'number');
      expect(stalls.length).toBeGreaterThanOrEqual(1);
      expect(stalls.every((l) => (l.syncMs as number) >= 1000 && l.level === 40)).toBe(true);
      expect(stalls.reduce((n, l) => n + (l.ackedBeforeSync as number), 0)).toBeGreaterThan(0);
      // Everything acknowledged is stored, once.
      const acked = acknowledgedTelegrams(home);
      const kept = stored(path.join(home, 'data'));
      expect(kept.REQU).toBe(acked.REQU.size);
      expect(kept.VERI).toBe(acked.VERI.size);
    },
  );

  itWhen(needs, 'the stalling disk (a preloaded shim, compiled with cc)')(
    'kill -9 during a stall loses nothing acknowledged: committed writes are in the page cache',
    async () => {
      const { emu, svc, watch, client } = await stalledLine({ seed: 5, seconds: 20, drainS: 1, loops: 2 });
      // Into a stall: the kill comes while a sync has been in flight for a while.
      await intoAStall(watch.seen, true);
      await svc.stop('SIGKILL');
      await watch.stop();
      await client.stop();
      await emu.stop();
      const acked = acknowledgedTelegrams(home);
      const kept = stored(path.join(home, 'data'));
      expect(kept.integrity).toBe('ok');
      expect(acked.REQU.size).toBeGreaterThan(30);
      expect(kept.REQU).toBeGreaterThanOrEqual(acked.REQU.size);
      expect(kept.VERI).toBeGreaterThanOrEqual(acked.VERI.size);
      expect(kept.SCAN).toBeGreaterThanOrEqual(acked.SCAN.size);
    },
  );

  for (const early of [true, false]) {
    const title = early
      ? 'a power cut during a stall loses at most the telegrams acknowledged before their sync (AckUnsyncedAfterMs)'
      : 'a power cut during a stall loses nothing acknowledged with AckUnsyncedAfterMs null';
    itWhen(needs, 'the stalling disk (a preloaded shim, compiled with cc)')(title, async () => {
      snapshots = fs.mkdtempSync(path.join(os.tmpdir(), 'stall-cut-'));
      const { emu, svc, watch, client } = await stalledLine({
        seed: 9,
        seconds: 20,
        drainS: 1,
        loops: 2,
        extra: early ? {} : { AckUnsyncedAfterMs: null },
        snapshotDir: snapshots,
      });
      await intoAStall(watch.seen, early);
      await sleep(300);
      // The cut: the process goes at once, and the disk keeps only what its syncs made durable.
      await svc.stop('SIGKILL');
      const seen = await watch.stop();
      await client.stop();
      await emu.stop();
      const acked = acknowledgedTelegrams(home);
      const disk = fs.mkdtempSync(path.join(os.tmpdir(), 'stall-cut-disk-'));
      try {
        for (const f of ['sorter.db', 'sorter.db-wal'])
          if (fs.existsSync(path.join(snapshots, f))) fs.copyFileSync(path.join(snapshots, f), path.join(disk, f));
        const kept = stored(disk);
        process.stderr.write(
          `power cut in a stall: ${JSON.stringify({ early, kept, acked: { REQU: acked.REQU.size, VERI: acked.VERI.size, SCAN: acked.SCAN.size }, ackedBeforeSync: seen.ackedBeforeSync })}\n`,
        );
        expect(kept.integrity).toBe('ok');
        const missing = (['REQU', 'VERI', 'SCAN'] as const).reduce((sum, t) => sum + Math.max(0, acked[t].size - kept[t]), 0);
        // /status is polled every 25 ms: ACKs given early after the last answered poll are not in
        // its count, hence a margin of about 100 ms of telegrams (30 items/s: 6, and some jitter).
        if (early) expect(missing).toBeLessThanOrEqual(seen.ackedBeforeSync + 10);
        else {
          expect(seen.ackedBeforeSync).toBe(0);
          expect(missing).toBe(0);
        }
      } finally {
        fs.rmSync(disk, { recursive: true, force: true });
      }
    });
  }
});

/**
 * The writer thread alone in a child process whose disk stalls 1.5 s at its first sync after 2 s:
 * a telegram's write starts the stalled sync; then, during the stall, a POST's entry (committed
 * without a sync) and a second telegram are written. Prints what each waited (ms) and /status's
 * storage during the stall.
 */
const WRITER_UNDER_STALL = `
const { Writer } = require(process.argv[1] + '/dist/db/writer.js');
const file = process.argv[2];
const ackUnsyncedAfterMs = process.argv[3] === 'null' ? null : Number(process.argv[3]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const request = (t) => ({ Type: 'REQUEST', MessageCode: 210, DeviceID: 'IND01', TrackID: t, Barcode: 'B' + t, Length: 1, Width: 1, Height: 1, Weight: 1, RecirculationCount: 0 });
const timed = (p) => { const at = performance.now(); return p.then(() => Math.round(performance.now() - at)); };
(async () => {
  const started = performance.now();
  const writer = await Writer.start({ file, synchronous: 'FULL', groupCommit: true, timing: { windowMs: 0, holdMs: 0 }, ackUnsyncedAfterMs });
  await writer.run('ensurePeerSession', ['PLC01', 'T']);
  await sleep(2100 - (performance.now() - started));
  const first = timed(writer.run('acceptFromPeer', ['PLC01', 1, 0, request('0001'), 'T', false, 1]));
  await sleep(300);
  const post = timed(writer.runUnsynced('addToOutboxUnsynced', [{ kind: 'ASSIGNMENT', body: { TrackID: '0001', Destination: 'D1' } }, null, 'T']));
  const second = timed(writer.run('acceptFromPeer', ['PLC01', 2, 1, request('0002'), 'T', false, 2]));
  await sleep(900);
  const storage = writer.status();
  const prompt = writer.prompt();
  const result = { first: await first, post: await post, second: await second, storage, prompt };
  await writer.close();
  console.log(JSON.stringify(result));
})();
`;

describe('the writer while a sync stalls', () => {
  let dir = '';
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const run = (ackUnsyncedAfterMs: number | null) => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writer-stall-'));
    const env = { ...process.env, ...syncStallEnv({ ms: 1500, everyS: 2 }) };
    const root = path.resolve(__dirname, '../..');
    const r = spawnSync(process.execPath, ['-e', WRITER_UNDER_STALL, root, path.join(dir, 'q.db'), String(ackUnsyncedAfterMs)], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (r.status !== 0) throw new Error(`the writer's child process failed (${r.status}): ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      first: number;
      post: number;
      second: number;
      storage: { State: string; WaitingFor: string | null; SyncInFlightMs: number | null; AckedBeforeSync: number };
      prompt: boolean;
    };
  };

  itWhen(needs, 'the stalling disk (a preloaded shim, compiled with cc)')(
    "commits go on beside it: a POST's entry at once, a telegram answered once synced (AckUnsyncedAfterMs null)",
    () => {
      const r = run(null);
      process.stderr.write(`writer under a stall, null: ${JSON.stringify(r)}\n`);
      // The first telegram's sync is the one that stalls; the second waits for the sync after it.
      expect(r.first).toBeGreaterThanOrEqual(1400);
      expect(r.second).toBeGreaterThanOrEqual(1000);
      // The POST's entry is committed while the sync stalls: the sorter gets it at once.
      expect(r.post).toBeLessThan(250);
      expect(r.storage).toMatchObject({ State: 'Stalled', WaitingFor: 'Disk', AckedBeforeSync: 0 });
      expect(r.storage.SyncInFlightMs).toBeGreaterThan(1000);
      // A slow sync does not stop messages being handed out before their commit.
      expect(r.prompt).toBe(true);
    },
  );

  itWhen(needs, 'the stalling disk (a preloaded shim, compiled with cc)')(
    'AckUnsyncedAfterMs 100: a telegram is answered 100 ms after its commit, and at once while a sync has lasted that long',
    () => {
      const r = run(100);
      process.stderr.write(`writer under a stall, 100: ${JSON.stringify(r)}\n`);
      expect(r.first).toBeGreaterThanOrEqual(90);
      expect(r.first).toBeLessThan(600);
      expect(r.second).toBeLessThan(250);
      expect(r.post).toBeLessThan(250);
      expect(r.storage.AckedBeforeSync).toBe(2);
    },
  );
});
