// Opening the queue database: WAL, synchronous mode, busy timeout, migrations; and the read-only
// connection.
import fs from 'node:fs';
import path from 'node:path';
import Database from './sqlite';
import { projectRoot } from '../lib/host/root';
import { migrate } from './migrate';

/** An open better-sqlite3 handle. */
export type Db = Database.Database;

/** How to open the queue database. */
export interface OpenOptions {
  /** FULL survives a power cut; NORMAL (in WAL mode) may lose the last commits on one. */
  synchronous?: 'FULL' | 'NORMAL';
  /** Folder of numbered *.sql migrations; defaults to the project's migrations/. */
  migrationsDir?: string;
}

/**
 * The page size of a new database (SQLite's default is 4,096; 512 is its smallest). Each commit
 * writes every page it changed whole to the WAL, and an item's commits change a few small rows on
 * 5 to 6 pages each, so the page size sets what the disk endures: 512-byte pages write about a
 * fifth fewer bytes per item than 1,024-byte pages, and those 2.4 times fewer than 4,096, with no
 * change in latency or CPU measured (docs/performance.md, "What it writes to the disk"). A row
 * of the history (at most a few hundred bytes) still fits in one page. An existing database keeps
 * the page size it was made with until an operator converts it (docs/operations.md, "Fewer writes
 * for an existing database").
 */
export const PAGE_SIZE = 512;

/**
 * Each connection's page cache, in KiB (SQLite's `cache_size`, negative: a size, not pages). The
 * SQLite that better-sqlite3 builds defaults to 16,000 KiB a connection, and a connection's cache
 * only grows: every page the writer appends to the history stays in it, never read again, until
 * 16 MB a connection, writer and reader alike, for pages the operating system's file cache holds
 * anyway. At 50 items/s that took the service past 125 MB within 5 minutes, still rising; with
 * this cache it levels off at about 111 MB (docs/performance.md, "Memory"). What the service
 * reads again is small (the queue tables, the outbox, the right edge of the history's trees);
 * a page that is not in the cache costs a read from the file cache.
 */
export const PAGE_CACHE_KB = 1024;

/** The project's migrations folder. */
export const defaultMigrationsDir = path.join(projectRoot, 'migrations');

/**
 * Open (creating if needed) the queue database for writing, in WAL mode so that readers (the
 * service's main thread, operators with sqlite3) never wait for it, and bring its schema up to
 * date. In the service only the writer thread (db/writer.ts) holds such a connection.
 */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma(`page_size = ${PAGE_SIZE}`); // only a new, empty file takes it; see PAGE_SIZE
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  // Another writer (an operator's sqlite3) may hold the lock for a moment: wait, don't fail.
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${PAGE_CACHE_KB}`);
  db.pragma('foreign_keys = ON');
  migrate(db, options.migrationsDir ?? defaultMigrationsDir);
  return db;
}

/**
 * A read-only connection to the queue database (the service's main thread): in WAL mode it sees
 * every committed transaction and never waits for a writer; it cannot write by mistake.
 */
export function openReader(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${PAGE_CACHE_KB}`);
  return db;
}
