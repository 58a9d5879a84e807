// Free space on a disk, for what must leave room to the queue database (the traffic log, the WAL).
import fs from 'node:fs';

/** Bytes an unprivileged writer may still use on the file system that holds `dir` (null: unknown). */
export function freeBytes(dir: string): number | null {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
