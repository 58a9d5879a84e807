// Schema migrations: numbered plain-SQL files in migrations/, applied in order, recorded in
// PRAGMA user_version.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { pragmaNumber } from './sqlite';

/** A numbered plain-SQL migration file such as `001-initial.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations in a folder, in version order; a gap or a repeated number is an error. */
export function readMigrations(dir: string): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => /^\d+-.*\.sql$/.test(f))
    .map((f) => ({ version: Number.parseInt(f, 10), name: f, sql: fs.readFileSync(path.join(dir, f), 'utf8') }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations in ${dir} must be numbered 1, 2, 3...: found ${m.name} at position ${i + 1}`);
  });
  return migrations;
}

/**
 * Apply every migration newer than `PRAGMA user_version`, each in its own immediate
 * transaction with the version bump, so a crash leaves the schema at a whole version.
 */
export function migrate(db: Database.Database, dir: string): number {
  const current = pragmaNumber(db, 'user_version');
  const migrations = readMigrations(dir);
  if (current > migrations.length) {
    throw new Error(`database schema version ${current} is newer than this service knows (${migrations.length}); refusing to run`);
  }
  // A migration may change a CREATE statement through PRAGMA writable_schema (010), which
  // better-sqlite3's defensive mode forbids: it is lifted for the migrations only.
  const pending = migrations.slice(current);
  if (pending.length > 0) db.unsafeMode(true);
  try {
    for (const m of pending) {
      db.transaction(() => {
        db.exec(m.sql);
        db.pragma(`user_version = ${m.version}`);
      }).immediate();
    }
  } finally {
    if (pending.length > 0) db.unsafeMode(false);
  }
  return migrations.length;
}
