// Test helper: a fresh SQLite file, migrated, removed afterwards.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Db, openDatabase } from '../../db/connection';

/** A fresh, migrated SQLite file in a temporary folder. */
export function freshDb(): { db: Db; file: string; dispose(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-db-'));
  const file = path.join(dir, 'queues.db');
  const db = openDatabase(file);
  return {
    db,
    file,
    dispose() {
      if (db.open) db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** For a describe block: a fresh, migrated database before each test, removed after it. */
export function freshDbEach(): { readonly db: Db; readonly file: string } {
  let current: ReturnType<typeof freshDb> | undefined;
  beforeEach(() => (current = freshDb()));
  afterEach(() => current?.dispose());
  return {
    get db() {
      return current!.db;
    },
    get file() {
      return current!.file;
    },
  };
}
