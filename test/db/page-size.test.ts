// The page size on real files: a new database gets PAGE_SIZE; one made with SQLite's default keeps
// it and works; the operator's conversion in docs/operations.md, run with the real sqlite3 tool,
// gives PAGE_SIZE with every row kept.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../db/sqlite';
import { PAGE_SIZE, defaultMigrationsDir, openDatabase } from '../../db/connection';
import { migrate } from '../../db/migrate';
import { freshDb } from '../helpers/db';
import { itWhen, missingCommands } from '../helpers/tools';

/** The conversion, as docs/operations.md gives it (the service stopped). */
const CONVERT = `PRAGMA journal_mode=DELETE; PRAGMA page_size=${PAGE_SIZE}; VACUUM; PRAGMA journal_mode=WAL;`;
const withSqlite3 = itWhen(missingCommands({ sqlite3: 'apt-get install sqlite3' }), 'page size: the conversion with the sqlite3 tool');

describe('page size', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'page-size-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A database as an earlier version made it: 4,096-byte pages (or 1,024), migrated, with queued rows. */
  function oldDatabase(file: string, rows: number, pageSize = 4096): void {
    const old = new Database(file);
    old.pragma(`page_size = ${pageSize}`);
    old.pragma('journal_mode = WAL');
    migrate(old, defaultMigrationsDir);
    const insert = old.prepare(
      "INSERT INTO sortation_queue (type, message_code, track_id, barcode, induct_location, recirculation_count, received_at) VALUES ('REQUEST', 210, ?, ?, 'I01', 0, '2026-11-24T00:00:00.000Z')",
    );
    old.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(String(i).padStart(7, '0'), `B${i}`);
    })();
    expect(old.pragma('page_size', { simple: true })).toBe(pageSize);
    old.close();
  }

  const queued = (db: Database.Database) => db.prepare('SELECT id, track_id, barcode FROM sortation_queue ORDER BY id').all();

  it(`a new database has ${PAGE_SIZE}-byte pages, and keeps them in WAL mode`, () => {
    const { db, dispose } = freshDb();
    try {
      expect(PAGE_SIZE).toBe(512);
      expect(db.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      dispose();
    }
  });

  it('a database made with 4,096-byte pages keeps them, and its rows', () => {
    const file = path.join(dir, 'old.db');
    oldDatabase(file, 500);
    const before = (() => {
      const r = new Database(file, { readonly: true });
      try {
        return queued(r);
      } finally {
        r.close();
      }
    })();
    const db = openDatabase(file);
    try {
      expect(db.pragma('page_size', { simple: true })).toBe(4096);
      expect(queued(db)).toEqual(before);
    } finally {
      db.close();
    }
  });

  withSqlite3.each([4096, 1024])(
    'the documented conversion with sqlite3 gives the new page size from %i-byte pages, every row kept, and the service opens it',
    (pageSize) => {
      const file = path.join(dir, 'old.db');
      oldDatabase(file, 5000, pageSize);
      const r = new Database(file, { readonly: true });
      const before = queued(r);
      r.close();

      execFileSync('sqlite3', [file, CONVERT]);

      const db = openDatabase(file);
      try {
        expect(db.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(queued(db)).toEqual(before);
      } finally {
        db.close();
      }
    },
  );

  withSqlite3('the conversion refuses to run while the service holds the database open', () => {
    const file = path.join(dir, 'old.db');
    oldDatabase(file, 10);
    const db = openDatabase(file); // as the service's writer holds it
    try {
      expect(() => execFileSync('sqlite3', [file, CONVERT], { stdio: 'pipe' })).toThrow(/locked/);
      expect(db.pragma('page_size', { simple: true })).toBe(4096);
    } finally {
      db.close();
    }
  });
});
