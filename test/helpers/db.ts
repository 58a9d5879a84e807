// Test helper: a fresh SQLite file, migrated, removed afterwards (even when the test fails).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Db, openDatabase } from '../../db/connection';

interface Fresh {
  db: Db;
  file: string;
  dispose(): void;
}

/** Databases not disposed yet. */
const open = new Set<Fresh>();

/**
 * Once the test file is done, remove what its tests left behind: a failed assertion skips the
 * dispose() at a test's end. (After the file, not after each test: a database opened in a
 * describe block or a beforeAll serves several tests.)
 */
afterAll(() => {
  for (const fresh of open) fresh.dispose();
});

/** A fresh, migrated SQLite file in a temporary folder. dispose() may be called more than once. */
export function freshDb(): Fresh {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-db-'));
  const file = path.join(dir, 'queues.db');
  const db = openDatabase(file);
  const fresh: Fresh = {
    db,
    file,
    dispose() {
      open.delete(fresh);
      if (db.open) db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  open.add(fresh);
  return fresh;
}

/** For a describe block: a fresh, migrated database before each test, removed after it. */
export function freshDbEach(): { readonly db: Db; readonly file: string } {
  let current: Fresh | undefined;
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
