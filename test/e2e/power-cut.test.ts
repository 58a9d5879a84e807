// A power cut that keeps nothing unsynced (issue 22; docs/reliability.md, "What a power cut
// loses"): the service runs with a shim that copies its database and WAL files at each of their
// syncs (bench/slow-fsync.c), then is killed. Those copies are what the disk holds if it kept not
// one byte that was not synced. Opened as the database, they still hold every telegram the sorter
// had acknowledged; every assignment the WCS had answered 200 is in them or was acknowledged by
// the sorter (DurableBySorterAck: answered on the sorter's ACK, before its sync). Only writes the
// service does not answer for (a delivered message's removal, the sorter's ACK of an assignment)
// may be missing, and the service hands such a message out again. Restarted on those files, the
// service numbers its next assignment above every number the sorter acknowledged (migrations/011):
// a number given twice would look like a repeat to the sorter, which would drop the assignment.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SyncCounter } from '../../bench/slow-disk';
import Database from '../../db/sqlite';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { acknowledgedTelegrams } from '../helpers/traffic-acks';
import { itWhen, missingCommands } from '../helpers/tools';

jest.setTimeout(90_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const needs =
  process.platform === 'linux'
    ? missingCommands({ [process.env.CC ?? 'cc']: 'apt-get install gcc' })
    : { Linux: 'LD_PRELOAD and /proc/self/fd' };

/** Rows that record what the sorter sent and the WCS posted, in a copy of the database. */
function recorded(dir: string) {
  const db = new Database(path.join(dir, 'sorter.db'));
  const n = (sql: string) => db.prepare(sql).pluck().get() as number;
  const kept = (type: string) =>
    n(`SELECT count(*) FROM sortation_queue WHERE type = '${type}'`) + n(`SELECT count(*) FROM delivered_history WHERE type = '${type}'`);
  const r = {
    requests: kept('REQUEST'),
    verifies: kept('VERIFY'),
    scans: n('SELECT count(*) FROM destination_queue') + n("SELECT count(*) FROM delivered_history WHERE type = 'SCAN'"),
    // Waiting for the sorter in the outbox, settled in outbox_history (migrations/009).
    assignments:
      n("SELECT count(*) FROM outbox WHERE kind = 'ASSIGNMENT'") + n("SELECT count(*) FROM outbox_history WHERE kind = 'ASSIGNMENT'"),
    assignmentIds: (
      db
        .prepare("SELECT id FROM outbox WHERE kind = 'ASSIGNMENT' UNION SELECT outbox_id FROM outbox_history WHERE kind = 'ASSIGNMENT'")
        .pluck()
        .all() as number[]
    ).map(Number),
    settings:
      n("SELECT count(*) FROM outbox WHERE kind = 'DESTINATION'") + n("SELECT count(*) FROM outbox_history WHERE kind = 'DESTINATION'"),
    delivered: n('SELECT count(*) FROM delivered_history'),
    integrity: db.prepare('PRAGMA integrity_check').pluck().get() as string,
  };
  db.close();
  return r;
}

describe('a power cut that keeps nothing unsynced', () => {
  let home = '';
  let snapshots = '';
  let syncs: SyncCounter | undefined;
  afterEach(() => {
    removeHome(home);
    fs.rmSync(snapshots, { recursive: true, force: true });
    syncs?.dispose();
  });

  itWhen(needs, 'the power cut (a preloaded shim, compiled with cc)')(
    'cut mid-stream: every telegram acknowledged and every POST answered 200 is in the files as they were at their last sync',
    async () => {
      const emu = await startEmulator([
        '--port',
        '0',
        '--rate',
        '30',
        '--duration',
        '8',
        '--seed',
        '7',
        '--capacity',
        '100000000',
        '--start-when-connected',
        '1000',
        '--drain-timeout',
        '1',
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
      snapshots = fs.mkdtempSync(path.join(os.tmpdir(), 'power-cut-'));
      syncs = new SyncCounter(0, snapshots);
      const svc = await startServiceProcess(home, syncs.env);
      const client = runWcsClient({ base: svc.base, loops: 2, timeOut: 1 });
      await sleep(1000 + 3000); // three seconds of items
      // The cut: the process goes at once, and the disk keeps only what was synced.
      await svc.stop('SIGKILL');
      const wcs = await client.stop();
      const sorter = await emu.stop();

      // What the service acknowledged to the sorter: its ACKs in the traffic log, each telegram once by its number and type.
      const acked = acknowledgedTelegrams(home);
      expect(acked.REQU.size).toBeGreaterThan(30);

      // The files as the disk would have them: the database and WAL as they were at their last sync.
      const disk = fs.mkdtempSync(path.join(os.tmpdir(), 'power-cut-disk-'));
      try {
        for (const f of ['sorter.db', 'sorter.db-wal'])
          if (fs.existsSync(path.join(snapshots, f))) fs.copyFileSync(path.join(snapshots, f), path.join(disk, f));
        const afterCut = recorded(disk);
        const afterCrash = recorded(path.join(home, 'data'));
        const acknowledged = { requests: acked.REQU.size, verifies: acked.VERI.size, scans: acked.SCAN.size };
        const brief = (r: ReturnType<typeof recorded>) => ({ ...r, assignmentIds: r.assignmentIds.length });
        process.stderr.write(
          `power cut: ${JSON.stringify({ afterCut: brief(afterCut), afterCrash: brief(afterCrash), acknowledged, posted: wcs.assignments_posted, sorterHas: sorter.assignments, syncs: syncs.total() })}\n`,
        );
        expect(afterCut.integrity).toBe('ok');
        // Every telegram acknowledged to the sorter is there, queued or handed out (one committed
        // whose ACK the cut stopped may be there too); every POST answered 200.
        expect(afterCut.requests).toBeGreaterThanOrEqual(acknowledged.requests);
        expect(afterCut.verifies).toBeGreaterThanOrEqual(acknowledged.verifies);
        expect(afterCut.scans).toBeGreaterThanOrEqual(acknowledged.scans);
        // Every assignment answered 200 is on the disk or with the sorter (the client posts no
        // settings). The sorter took assignments numbered 1, 2, 3... (a fresh outbox): the first
        // `sorter.assignments` of them.
        const sorterHas = Array.from({ length: sorter.assignments }, (_, i) => i + 1);
        expect(new Set([...afterCut.assignmentIds, ...sorterHas]).size).toBeGreaterThanOrEqual(wcs.assignments_posted);
        expect(afterCut.settings).toBeGreaterThanOrEqual(wcs.destination_settings_posted);
        // What may be missing is only what the service does not answer for: deliveries, handed out again.
        expect(afterCut.delivered).toBeLessThanOrEqual(afterCrash.delivered);

        // Restarted on the files the cut left (no sorter to talk to: the POST is committed and synced
        // before it would be sent), the next assignment's number is above every one the sorter has.
        const again = tempHome({
          'config.json': {
            TestMode: false,
            Port: 0,
            Host: '127.0.0.1',
            Synchronous: 'FULL',
            Sorter: { Host: '127.0.0.1', Port: emu.port },
          },
        });
        try {
          fs.mkdirSync(path.join(again, 'data'));
          for (const f of fs.readdirSync(disk)) fs.copyFileSync(path.join(disk, f), path.join(again, 'data', f));
          const restarted = await startServiceProcess(again);
          try {
            const res = await fetch(`${restarted.base}/sortation`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ TrackID: '0099999', Destination: 'D001' }),
            });
            expect(res.status).toBe(200);
            const body = (await res.json()) as { OutboxID: number };
            expect(sorter.assignments).toBeGreaterThan(30);
            expect(body.OutboxID).toBeGreaterThan(sorter.assignments);
            expect(body.OutboxID).toBeGreaterThan(Math.max(0, ...afterCut.assignmentIds));
          } finally {
            await restarted.stop('SIGKILL');
          }
        } finally {
          removeHome(again);
        }
      } finally {
        fs.rmSync(disk, { recursive: true, force: true });
      }
    },
  );
});
