// One service per home: an exclusive lock taken before anything is touched (the database, the
// replay seeding, the sorter link, the port), so that a second start by mistake changes nothing.
import fs from 'node:fs';
import path from 'node:path';
import Database from '../../db/sqlite';
import { errorCode } from './errors';

/** Another instance holds the home: says which process. */
export class InstanceLockedError extends Error {
  constructor(
    readonly home: string,
    readonly holder: string,
  ) {
    super(`another instance of the service is running on ${home} (${holder}); stop it first, or give this one its own SORTER_HOME`);
    this.name = 'InstanceLockedError';
  }
}

/** The lock and the note of who holds it, in the home's data/ folder. */
const LOCK = ['data', 'instance.lock'];
const HOLDER = ['data', 'instance.pid'];

/** The home's lock, held; and whether the run before this one stopped cleanly. */
export interface InstanceLock {
  /**
   * The run before this one stopped cleanly (its note was removed), or there was none: nothing it
   * handed out can be waiting for a commit. False after a crash, a kill -9 or a power cut.
   */
  readonly lastStopClean: boolean;
  /** Let the lock go; `clean`: this run stopped cleanly (its note is removed, for the next run to see). */
  release(clean?: boolean): void;
}

/**
 * Take the home's lock, or throw InstanceLockedError. It is an SQLite file held in EXCLUSIVE
 * locking mode: the operating system's file lock, released when the process ends in any way
 * (kill -9 and power cuts included), so a stale lock never blocks a restart. The note of who
 * holds it stays behind when a run ends in any other way than a clean stop.
 */
export function lockInstance(home: string): InstanceLock {
  const file = path.join(home, ...LOCK);
  const holderFile = path.join(home, ...HOLDER);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS instance (pid INTEGER); COMMIT;');
  } catch (err) {
    db.close();
    if (errorCode(err) !== 'SQLITE_BUSY') throw err;
    let holder = 'process unknown';
    try {
      holder = fs.readFileSync(holderFile, 'utf8').trim();
    } catch {
      // the other instance has not written its note yet
    }
    throw new InstanceLockedError(home, holder);
  }
  const lastStopClean = !fs.existsSync(holderFile);
  fs.writeFileSync(holderFile, `pid ${process.pid}, started ${new Date().toISOString()}\n`);
  return {
    lastStopClean,
    release(clean = false) {
      if (!db.open) return;
      if (clean) fs.rmSync(holderFile, { force: true });
      db.close();
    },
  };
}
