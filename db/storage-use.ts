// What the stores take on the disk: the database file, its WAL, the traffic log's files, the pages
// in use, and the file system's size and free space. Read on the main thread: a few stat calls and
// three pragmas, cheap enough to look every few seconds.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './connection';
import type { StorageMeasure } from './history-bound';
import type { HistoryReads } from './history-store';

/** A file's size, 0 when it does not exist. */
export const fileBytes = (file: string): number => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};

/** The bytes of a rotated log's files: `file` and `file.1` ... in its folder. */
export function rotatedFilesBytes(file: string): number {
  const base = path.basename(file);
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(file));
  } catch {
    return 0;
  }
  return names
    .filter((n) => n === base || (n.startsWith(`${base}.`) && /^\d+$/.test(n.slice(base.length + 1))))
    .reduce((sum, n) => sum + fileBytes(path.join(path.dirname(file), n)), 0);
}

/** The file system that holds `dir`: its size and what an unprivileged writer may still use; nulls when unknown. */
export function fileSystemOf(dir: string): { sizeBytes: number | null; freeBytes: number | null } {
  try {
    const s = fs.statfsSync(dir);
    return { sizeBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize };
  } catch {
    return { sizeBytes: null, freeBytes: null };
  }
}

/** The pages of the database in use (not on its freelist), in bytes, as `db` sees the latest commit. */
export function usedDatabaseBytes(db: Db): number {
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return (pages - free) * (db.pragma('page_size', { simple: true }) as number);
}

/** Measure the stores: `database` the SQLite file (its WAL beside it), `trafficLog` Service_PLC.log if the service keeps one. */
export function measureStorage(
  db: Db,
  history: Pick<HistoryReads, 'extent'>,
  files: { database: string; trafficLog?: string },
): StorageMeasure {
  const { sizeBytes, freeBytes } = fileSystemOf(path.dirname(files.database));
  return {
    databaseBytes: fileBytes(files.database),
    walBytes: fileBytes(`${files.database}-wal`),
    trafficLogBytes: files.trafficLog ? rotatedFilesBytes(files.trafficLog) : 0,
    usedDatabaseBytes: usedDatabaseBytes(db),
    fileSystemBytes: sizeBytes,
    freeBytes,
    history: history.extent(),
  };
}
