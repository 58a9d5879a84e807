import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { defaultMigrationsDir } from '../../db/connection';
import { migrate, readMigrations } from '../../db/migrate';
import { freshDb } from '../helpers/db';

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
});
