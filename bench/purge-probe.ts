// Child process of the benchmark: what the hourly history purge costs the sorter's messages.
// A database with HOURS hours of history at 30 items/s; a stream of single enqueues at 50/s
// through the real writer thread (as the sorter's telegrams arrive); the oldest hours purged
// once as one transaction (the baseline: how it was done before 2026-11-24), once as
// housekeeping does it, in chunks, and once as the size bound does (handlers/history-bound.ts: a
// bound that holds the newer hours, the cut in the same chunks, the WAL started over between two
// once it holds 16 MB), each on its own copy of the database. Prints one JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, openReader } from '../db/connection';
import { Writer } from '../db/writer';
import { housekeeping } from '../handlers/housekeeping';
import { historyBound } from '../handlers/history-bound';
import { CUT_TO_SHARE, walAllowance } from '../db/history-bound';
import { historyReads } from '../db/history-store';
import { measureStorage, usedDatabaseBytes } from '../db/storage-use';
import { WAL_LIMITS } from '../db/wal-limits';
import { StorageWatch } from '../lib/ops/storage-watch';
import { LatencyWindow } from '../lib/ops/latency';
import { createLogger } from '../lib/process/logger';
import { sleep } from './processes';
import { sampleRequest, sampleVerify } from './sample-item';

const ITEMS_PER_HOUR = 30 * 3600;
const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const at = (hour: number, i: number) => new Date(T0 + hour * 3600e3 + (i * 3600e3) / ITEMS_PER_HOUR).toISOString();

/** History rows as the service writes them: a REQUEST and a VERIFY delivered, an assignment acknowledged, per item. */
function buildHistory(file: string, hours: number): void {
  const db = openDatabase(file, { synchronous: 'NORMAL' });
  const delivered =
    db.prepare(`INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination, payload, received_at, delivered_at, client_address, attempt, read_proof)
    VALUES ('sortation', ?, ?, ?, ?, '4006381333931', ?, ?, ?, ?, '10.0.0.5', 1, 'NextRequest')`);
  const outbox =
    db.prepare(`INSERT INTO outbox_history (outbox_id, kind, track_id, barcode, destination, client_address, created_at, fate, settled_at)
    VALUES (?, 'ASSIGNMENT', ?, '4006381333931', 'D12', '10.0.0.5', ?, 'Acknowledged', ?)`);
  let id = 0;
  const hour = db.transaction((h: number) => {
    for (let i = 0; i < ITEMS_PER_HOUR; i++, id++) {
      const t = at(h, i);
      const track = String(id).padStart(10, '0');
      delivered.run(2 * id, 'REQUEST', 210, track, 'IND01', JSON.stringify(sampleRequest(track)), t, t);
      delivered.run(2 * id + 1, 'VERIFY', 212, track, 'D12', JSON.stringify(sampleVerify(track)), t, t);
      outbox.run(id + 1, track, t, t);
    }
  });
  for (let h = 0; h < hours; h++) hour(h);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Nothing lost, nothing repeated, nothing purged that was younger than the cutoff: the rows to check it by. */
function countRows(file: string, cutoff: string) {
  const db = openReader(file);
  try {
    const queued = db
      .prepare<[], { n: number; d: number }>('SELECT count(*) AS n, count(DISTINCT track_id) AS d FROM sortation_queue')
      .get() ?? { n: 0, d: 0 };
    const older = db
      .prepare<{ c: string }, { n: number }>(
        'SELECT (SELECT count(*) FROM delivered_history WHERE delivered_at < @c) + (SELECT count(*) FROM outbox_history WHERE settled_at < @c) AS n',
      )
      .get({ c: cutoff });
    const kept = db
      .prepare<[], { n: number }>('SELECT (SELECT count(*) FROM delivered_history) + (SELECT count(*) FROM outbox_history) AS n')
      .get();
    return { queued, older: older?.n ?? 0, kept: kept?.n ?? 0 }; // each a count: always a row
  } finally {
    db.close();
  }
}

/** Before: the commits done before the purge began; during: the rest (a message sent just before it may have waited for it). */
function splitAtPurge(commits: Array<{ sent: number; done: number }>, started: number) {
  const before = new LatencyWindow(commits.length);
  const during = new LatencyWindow(commits.length);
  let maxDuring = 0;
  for (const c of commits) {
    const ms = c.done - c.sent;
    if (c.done < started) before.add(ms);
    else {
      during.add(ms);
      maxDuring = Math.max(maxDuring, ms);
    }
  }
  return { before: before.summary(), during: during.summary(), maxDuring };
}

/** Purge the hours before `purgeHours` while 50 enqueues a second go through the writer; their commit times. */
async function measure(file: string, purgeHours: number, way: 'one' | 'chunks' | 'size', hours: number) {
  const writer = await Writer.start({ file, synchronous: 'FULL', groupCommit: true });
  // Each message's commit: when it was sent and when its commit was reported.
  const commits: Array<{ sent: number; done: number }> = [];
  let n = 0;
  const stop = new AbortController();
  const pending: Array<Promise<unknown>> = [];
  const stream = (async () => {
    while (!stop.signal.aborted) {
      const sent = performance.now();
      // The first ones warm the writer up: not counted.
      const counted = n >= 10;
      pending.push(
        writer
          .run('enqueue', [
            [{ Type: 'VERIFY', TrackID: `S${n++}`, Barcode: '', Destination: 'D1', MessageCode: 212 }],
            new Date().toISOString(),
          ])
          .then(() => counted && commits.push({ sent, done: performance.now() })),
      );
      await sleep(20);
    }
  })();
  await sleep(2000);
  const cutoff = at(purgeHours, 0);
  const started = performance.now();
  const { purged, sizeCutoff } = await purgeOneWay(way, file, writer, cutoff, (hours - purgeHours) / hours);
  const seconds = (performance.now() - started) / 1000;
  stop.abort();
  await stream;
  await Promise.all(pending);
  await writer.close();
  const files = countRows(file, sizeCutoff ?? cutoff);
  const { before: b, during: d, maxDuring } = splitAtPurge(commits, started);
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    purged,
    seconds: r(seconds),
    commitP50BeforeMs: b.P50Ms,
    commitP99BeforeMs: b.P99Ms,
    commitP50Ms: d.P50Ms,
    commitP99Ms: d.P99Ms,
    commitMaxMs: r(maxDuring),
    lost: n - files.queued.n,
    duplicated: files.queued.n - files.queued.d,
    olderLeft: files.older,
    kept: files.kept,
  };
}

/** Purge the history older than `cutoff` one way: as one transaction, as housekeeping does in chunks, or by the size bound's cut keeping `keepShare`. */
async function purgeOneWay(
  way: 'one' | 'chunks' | 'size',
  file: string,
  writer: Writer,
  cutoff: string,
  keepShare: number,
): Promise<{ purged: number; sizeCutoff: string | null }> {
  if (way === 'one') return { purged: await writer.run('purgeHistory', [cutoff, Number.MAX_SAFE_INTEGER]), sizeCutoff: null };
  if (way === 'size') {
    const cut = await sizeCut(file, writer, keepShare);
    return { purged: cut.purged, sizeCutoff: cut.cutoff };
  }
  const history = {
    purgeHistory: (c: string, l: number) => writer.run('purgeHistory', [c, l]),
    checkpoint: async () => ({ busy: false, walFrames: 0, checkpointed: 0 }),
  };
  const result = await housekeeping({
    history,
    clock: () => new Date(Date.parse(cutoff) + 86400e3),
    settings: { HistoryRetentionDays: 1 },
    log: createLogger('silent'),
  });
  return { purged: (result as { body: { PurgedHistoryRows: number } }).body.PurgedHistoryRows, sizeCutoff: null };
}

/**
 * The size bound's cut through the real handler and watch: a bound (HistoryMaxBytes) that holds
 * `keepShare` of the history's pages in use (over CUT_TO_SHARE, so that the cut leaves that share).
 */
async function sizeCut(file: string, writer: Writer, keepShare: number): Promise<{ purged: number; cutoff: string | null }> {
  const reader = openReader(file);
  try {
    const reads = historyReads(reader);
    const used = usedDatabaseBytes(reader);
    const limits = WAL_LIMITS;
    const settings = {
      maxBytes: Math.round((used * keepShare) / CUT_TO_SHARE + walAllowance(limits)),
      maxDiskShare: 0.4,
      keepFreeShare: 0,
      retentionDays: 30,
      walAllowanceBytes: walAllowance(limits),
      trafficLogMaxBytes: 0,
    };
    const watch = new StorageWatch(
      settings,
      () => measureStorage(reader, reads, { database: file }),
      (share) => reads.timeAtShare(share),
      () => new Date(),
      createLogger('silent'),
      () => fs.statSync(`${file}-wal`).size >= limits.restartBytes,
    );
    const history = {
      purgeHistory: (c: string, l: number) => writer.run('purgeHistory', [c, l]),
      checkpoint: (m?: 'TRUNCATE' | 'RESTART', w?: number) => writer.run('checkpoint', [m, w]),
    };
    const result = (await historyBound({ history, storageWatch: watch })) as { body: { PurgedHistoryRows?: number; Cutoff?: string } };
    return { purged: result.body.PurgedHistoryRows ?? 0, cutoff: result.body.Cutoff ?? null };
  } finally {
    reader.close();
  }
}

/** `node dist/bench/purge-probe.js HOURS PURGE_HOURS` (fsync delay from the environment: bench/slow-disk.ts). */
async function main() {
  const [hours, purgeHours] = process.argv.slice(2).map(Number);
  if (hours === undefined || purgeHours === undefined) throw new Error('usage: purge-probe HOURS PURGE_HOURS');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-purge-'));
  try {
    const source = path.join(dir, 'history.db');
    buildHistory(source, hours);
    const result: Record<string, unknown> = {
      hours,
      purgeHours,
      rows: hours * ITEMS_PER_HOUR * 3,
      dbMb: Math.round(fs.statSync(source).size / 1e6),
    };
    for (const way of ['one', 'chunks', 'size'] as const) {
      const file = path.join(dir, `${way}.db`);
      fs.copyFileSync(source, file);
      result[way] = await measure(file, purgeHours, way, hours);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
void main();
