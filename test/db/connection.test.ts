// Opening the queue database (db/connection.ts) on real files: the writer's connection (folder
// made, WAL, synchronous, busy timeout, foreign keys, migrated) and the main thread's read-only one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PAGE_CACHE_KB, defaultMigrationsDir, openDatabase, openReader } from '../../db/connection';
import { readMigrations } from '../../db/migrate';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-connection-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('openDatabase', () => {
  it('makes its folder and a migrated WAL database that waits for locks and checks foreign keys', () => {
    const file = path.join(dir, 'data', 'deep', 'q.db');
    const db = openDatabase(file);
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KB); // not better-sqlite3's 16 MB
      expect(db.pragma('user_version', { simple: true })).toBe(readMigrations(defaultMigrationsDir).length);
    } finally {
      db.close();
    }
  });

  it('synchronous NORMAL when asked; a second open applies nothing again', () => {
    const file = path.join(dir, 'q.db');
    openDatabase(file).close();
    const db = openDatabase(file, { synchronous: 'NORMAL' });
    try {
      expect(db.pragma('synchronous', { simple: true })).toBe(1);
      expect(db.pragma('user_version', { simple: true })).toBe(readMigrations(defaultMigrationsDir).length);
    } finally {
      db.close();
    }
  });
});

describe('openReader', () => {
  it('sees what the writer committed and cannot write', () => {
    const file = path.join(dir, 'q.db');
    const writer = openDatabase(file);
    const reader = openReader(file);
    try {
      writer.prepare("INSERT INTO outbox (kind, track_id, destination, created_at) VALUES ('ASSIGNMENT', 'T1', 'D1', 'now')").run();
      expect(reader.prepare('SELECT track_id FROM outbox').pluck().all()).toEqual(['T1']);
      expect(() => reader.prepare('DELETE FROM outbox').run()).toThrow(/readonly/i);
      expect(reader.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(reader.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KB);
    } finally {
      reader.close();
      writer.close();
    }
  });

  it('refuses a file that does not exist rather than making one', () => {
    const file = path.join(dir, 'missing.db');
    expect(() => openReader(file)).toThrow();
    expect(fs.existsSync(file)).toBe(false);
  });
});
