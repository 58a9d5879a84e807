// Migrations on real SQLite files: order, idempotence, refusal of newer schemas, 004's data
// carried over.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../db/sqlite';
import { defaultMigrationsDir } from '../../db/connection';
import { migrate, readMigrations } from '../../db/migrate';
import { deadLetterReads } from '../../db/dead-letter-store';
import { createLinkStore } from '../../db/link-store';
import { createOutboxStore } from '../../db/outbox-store';
import { createQueueStore } from '../../db/queue-store';
import { messageInsert } from '../../db/queue-rows';
import type { InductDto, OutboundMessage } from '../../model/messages';
import { freshDb } from '../helpers/db';

/**
 * A database file as a version of the service left it: migrated up to `version` only (those
 * migrations in a folder of their own), in WAL mode. `dispose` removes the folder.
 */
function databaseAt(version: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-'));
  for (const m of readMigrations(defaultMigrationsDir).filter((m) => m.version <= version)) fs.writeFileSync(path.join(dir, m.name), m.sql);
  const file = path.join(dir, `v${version}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  migrate(db, dir);
  return { file, db, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

describe('migrations', () => {
  it('applies every numbered file and records the version in PRAGMA user_version', () => {
    const { db, dispose } = freshDb();
    expect(db.pragma('user_version', { simple: true })).toBe(readMigrations(defaultMigrationsDir).length);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual(expect.arrayContaining(['delivered_history', 'destination_queue', 'outbox', 'sortation_queue']));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    dispose();
  });

  it('is idempotent: a second run applies nothing', () => {
    const { db, dispose } = freshDb();
    const before = db.prepare('SELECT count(*) FROM sqlite_master').pluck().get();
    migrate(db, defaultMigrationsDir);
    expect(db.prepare('SELECT count(*) FROM sqlite_master').pluck().get()).toBe(before);
    dispose();
  });

  it('refuses a database newer than the code', () => {
    const { db, dispose } = freshDb();
    db.pragma('user_version = 99');
    expect(() => migrate(db, defaultMigrationsDir)).toThrow(/newer than this service knows/);
    dispose();
  });

  it('leaves the schema at a whole version when a migration fails', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-'));
    fs.writeFileSync(path.join(dir, '001-a.sql'), 'CREATE TABLE a (x);');
    fs.writeFileSync(path.join(dir, '002-b.sql'), 'CREATE TABLE b (x); INSERT INTO nowhere VALUES (1);');
    const db = new Database(':memory:');
    expect(() => migrate(db, dir)).toThrow(/nowhere/);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'b'").pluck().get()).toBe(0);
    fs.rmSync(dir, { recursive: true });
  });

  it('requires numbering without gaps', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-'));
    fs.writeFileSync(path.join(dir, '001-a.sql'), '');
    fs.writeFileSync(path.join(dir, '003-c.sql'), '');
    expect(() => readMigrations(dir)).toThrow(/numbered 1, 2, 3/);
    fs.rmSync(dir, { recursive: true });
  });

  it('004 drops the link columns nothing used, keeping the sessions and the outbox of a version-3 database', () => {
    const { db, dispose } = databaseAt(3);
    db.prepare(
      "INSERT INTO link_state (peer, peer_epoch, last_seq_in, our_epoch, next_seq_out, updated_at) VALUES ('PLC01', 'P', 41, 'O', 1, 'T')",
    ).run();
    db.prepare(
      "INSERT INTO outbox (kind, track_id, barcode, destination, created_at, seq, attempts) VALUES ('ASSIGNMENT', '1', '', 'D1', 'T', 7, 2)",
    ).run();
    migrate(db, defaultMigrationsDir);
    expect(db.pragma('user_version', { simple: true })).toBe(readMigrations(defaultMigrationsDir).length);
    const columns = (table: string) => db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all();
    expect(columns('link_state')).toEqual(['peer', 'peer_epoch', 'last_seq_in', 'our_epoch', 'updated_at']);
    expect(columns('outbox')).not.toEqual(expect.arrayContaining(['seq']));
    expect(columns('outbox')).not.toContain('sent_at');
    expect(columns('outbox')).not.toContain('attempts');
    expect(db.prepare('SELECT peer, peer_epoch, last_seq_in, our_epoch FROM link_state').get()).toEqual({
      peer: 'PLC01',
      peer_epoch: 'P',
      last_seq_in: 41,
      our_epoch: 'O',
    });
    expect(db.prepare('SELECT id, track_id FROM outbox').get()).toEqual({ id: 1, track_id: '1' });
    db.close();
    dispose();
  });

  it("009: an assignment waiting at the upgrade loses its 'Queued' history row and gets its row when the sorter acknowledges it", () => {
    const { db, dispose } = databaseAt(8);
    const add = db.prepare(
      "INSERT INTO outbox (kind, track_id, barcode, destination, client_address, created_at) VALUES ('ASSIGNMENT', ?, 'B', 'D1', NULL, 'T')",
    );
    const settled = Number(add.run('S').lastInsertRowid);
    const waiting = Number(add.run('W').lastInsertRowid);
    db.prepare('DELETE FROM outbox WHERE id = ?').run(settled);
    const history = () => db.prepare('SELECT outbox_id, fate FROM outbox_history ORDER BY outbox_id').all();
    expect(history()).toEqual([
      { outbox_id: settled, fate: 'Acknowledged' },
      { outbox_id: waiting, fate: 'Queued' },
    ]);
    migrate(db, defaultMigrationsDir);
    expect(history()).toEqual([{ outbox_id: settled, fate: 'Acknowledged' }]);
    db.prepare('DELETE FROM outbox WHERE id = ?').run(waiting);
    expect(history()).toEqual([
      { outbox_id: settled, fate: 'Acknowledged' },
      { outbox_id: waiting, fate: 'Acknowledged' },
    ]);
    db.close();
    dispose();
  });

  it('010: the tables lose AUTOINCREMENT and keep their rows; the highest ids given carry over, and nothing writes sqlite_sequence again', () => {
    const { file, db, dispose } = databaseAt(9);
    const addRequest = db.prepare(
      "INSERT INTO sortation_queue (type, message_code, track_id, barcode, induct_location, recirculation_count, received_at) VALUES ('REQUEST', 210, ?, 'B', 'I1', 0, 'T')",
    );
    for (const t of ['1', '2', '3']) addRequest.run(t);
    db.prepare('DELETE FROM sortation_queue WHERE id = 3').run(); // delivered: its id is in sqlite_sequence only
    db.prepare("INSERT INTO outbox (kind, track_id, barcode, destination, created_at) VALUES ('ASSIGNMENT', '1', 'B', 'D1', 'T')").run();
    db.prepare('DELETE FROM outbox').run();
    db.prepare(
      "INSERT INTO delivered_history (queue, message_id, type, message_code, payload, received_at, delivered_at) VALUES ('sortation', 3, 'REQUEST', 210, '{}', 'T', 'T')",
    ).run();
    db.close();

    const migrated = new Database(file);
    migrate(migrated, defaultMigrationsDir);
    try {
      const schema = migrated.prepare("SELECT group_concat(sql, ' ') FROM sqlite_schema WHERE type = 'table'").pluck().get() as string;
      expect(schema).not.toMatch(/AUTOINCREMENT/);
      expect(migrated.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(migrated.prepare('SELECT id FROM sortation_queue ORDER BY id').pluck().all()).toEqual([1, 2]);
      expect(migrated.prepare('SELECT name, floor FROM id_floors ORDER BY name').all()).toEqual([
        { name: 'destination_queue', floor: 0 },
        { name: 'outbox', floor: 1 },
        { name: 'sortation_queue', floor: 3 },
      ]);
      const insert = messageInsert(migrated);
      const request = {
        Type: 'REQUEST',
        TrackID: '4',
        Barcode: 'B',
        MessageCode: 210,
        InductLocation: 'I1',
        RecirculationCount: 0,
        Length: null,
        Width: null,
        Height: null,
        Weight: null,
      } as unknown as InductDto;
      expect(insert(request, 'T')).toBe(4);
      expect(
        createOutboxStore(migrated).addToOutbox(
          { kind: 'ASSIGNMENT', body: { TrackID: '4', Barcode: 'B', Destination: 'D1' } } as OutboundMessage,
          null,
          'T',
        ),
      ).toBe(2);
      expect(
        migrated
          .prepare(
            "SELECT count(*) FROM sqlite_sequence WHERE name IN ('sortation_queue', 'destination_queue', 'outbox', 'delivered_history')",
          )
          .pluck()
          .get(),
      ).toBe(0);
    } finally {
      migrated.close();
      dispose();
    }
  });

  it('012: rows written before keep their whole body, and delivered_messages gives it as it was', () => {
    const { file, db, dispose } = databaseAt(11);
    const body =
      '{"Type":"REQUEST","TrackID":"7","Barcode":"B","MessageCode":210,"InductLocation":"I1","RecirculationCount":2,"Length":400,"Width":1.5,"Height":3,"Weight":0.25}';
    db.prepare(
      "INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination, payload, received_at, delivered_at) VALUES ('sortation', 3, 'REQUEST', 210, '7', 'B', 'I1', ?, 'T', 'T')",
    ).run(body);
    db.close();

    const migrated = new Database(file);
    migrate(migrated, defaultMigrationsDir);
    try {
      expect(migrated.prepare("SELECT body, body ->> '$.RecirculationCount' AS rc FROM delivered_messages").get()).toEqual({ body, rc: 2 });
    } finally {
      migrated.close();
      dispose();
    }
  });
  it('013: the board starts with the latest SCAN of each destination still in the queue', () => {
    const { file, db, dispose } = databaseAt(12);
    const insert = db.prepare(
      "INSERT INTO destination_queue (message_code, destination, destination_status, destination_text, light_status, light_color, button_id, batch_door_status, received_at) VALUES (211, ?, ?, '', 'Off', 'Off', 0, NULL, ?)",
    );
    insert.run('D1', 'Ready', 'T1');
    insert.run('D1', 'NotReady', 'T2');
    insert.run('D2', 'Ready', 'T3');
    db.close();

    const migrated = new Database(file);
    migrate(migrated, defaultMigrationsDir);
    try {
      expect(
        migrated
          .prepare('SELECT destination, destination_status, changed_at, changed_by, agreement FROM destination_board ORDER BY destination')
          .all(),
      ).toEqual([
        { destination: 'D1', destination_status: 'NotReady', changed_at: 'T2', changed_by: 'sorter', agreement: null },
        { destination: 'D2', destination_status: 'Ready', changed_at: 'T3', changed_by: 'sorter', agreement: null },
      ]);
    } finally {
      migrated.close();
      dispose();
    }
  });

  it('015: the dropped entries are counted from the rows there and as drops come, once each; the dead letters are kept equal to their rows', () => {
    const { file, db, dispose } = databaseAt(14);
    const dead = db.prepare(
      "INSERT INTO dead_letters (queue, message_id, type, message_code, payload, received_at, dead_at, attempts, last_return) VALUES (?, ?, 'SCAN', 211, '{}', 'T0', 'T1', 5, 'NoProof')",
    );
    for (let id = 1; id <= 4; id++) dead.run(id === 4 ? 'destination' : 'sortation', id);
    const drop = db.prepare(
      "INSERT INTO outbox_dropped (id, kind, track_id, destination, created_at, dropped_at, reason) VALUES (?, ?, 'T', 'D1', 'T0', 'T1', 'ttl')",
    );
    // Outbox ids 101 to 105, as entries of an earlier run had them.
    for (let id = 101; id <= 105; id++) drop.run(id, id <= 103 ? 'ASSIGNMENT' : 'DESTINATION');
    db.close();

    const migrated = new Database(file);
    migrate(migrated, defaultMigrationsDir);
    try {
      const links = createLinkStore(migrated, createQueueStore(migrated));
      const counts = () => [links.droppedCount('ASSIGNMENT'), links.droppedCount('DESTINATION')];
      expect(counts()).toEqual([3, 2]);
      // A drop through the store, then its repeat after a resync: counted once.
      const outbox = createOutboxStore(migrated);
      outbox.addToOutbox({ kind: 'ASSIGNMENT', body: { TrackID: 'X', Destination: 'D2' } } as OutboundMessage, null, 'T2');
      const entry = outbox.peek(1)[0]!;
      links.dropFromOutbox(entry, 'time to live passed', 'T3');
      links.dropFromOutbox(entry, 'time to live passed', 'T4');
      expect(counts()).toEqual([4, 2]);
      expect(migrated.prepare('SELECT dropped_at FROM outbox_dropped WHERE id = ?').pluck().get(entry.id)).toBe('T4');
      // Ever dropped: rows that leave (the purge, an operator's sqlite3) leave the counts as they are.
      migrated.prepare('DELETE FROM outbox_dropped WHERE id IN (101, 104)').run();
      expect(counts()).toEqual([4, 2]);
      const deadLetters = deadLetterReads(migrated);
      expect(deadLetters.deadLetterCounts()).toEqual({ sortation: 3, destination: 1 });
      migrated.prepare("DELETE FROM dead_letters WHERE queue = 'sortation' AND message_id = 1").run();
      migrated.prepare("UPDATE dead_letters SET queue = 'destination' WHERE message_id = 2").run();
      expect(deadLetters.deadLetterCounts()).toEqual({ sortation: 1, destination: 2 });
    } finally {
      migrated.close();
      dispose();
    }
  });
});
