import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { projectRoot } from '../lib/paths';
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

/** The project's migrations folder. */
export const defaultMigrationsDir = path.join(projectRoot, 'migrations');

/**
 * Open (creating if needed) the queue database in WAL mode, so that operators can read it
 * with sqlite3 while the service writes, and bring its schema up to date.
 */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  // Another writer (an operator's sqlite3) may hold the lock for a moment: wait, don't fail.
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db, options.migrationsDir ?? defaultMigrationsDir);
  return db;
}
