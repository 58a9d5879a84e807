// The SQLite driver, better-sqlite3, in the major that is safe on the Node running it.
//
// better-sqlite3 12 is built on Node's raw ObjectWrap: on Node 24.19 and later its statement
// finalizer can run after a worker thread's environment is gone, and Node aborts the process
// (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook). Major 13 (node-addon-api,
// prebuilt N-API binaries in the package) fixes that but needs Node 22 or later, and crashes on 20.
// Both are installed (package.json: `better-sqlite3` and the alias `better-sqlite3-13`); this
// module picks 13 on Node 22 and later and 12 on Node 20. Their JavaScript API is the same.
import type BetterSqlite3 from 'better-sqlite3';

/** The major of the driver for a Node version (`process.versions.node`). */
export function driverMajor(nodeVersion: string): 12 | 13 {
  return Number(nodeVersion.split('.')[0]) >= 22 ? 13 : 12;
}

/** The driver's package name for this process. */
export const driverPackage = driverMajor(process.versions.node) === 13 ? 'better-sqlite3-13' : 'better-sqlite3';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database: typeof BetterSqlite3 = require(driverPackage);
type Database = BetterSqlite3.Database;
// eslint-disable-next-line @typescript-eslint/no-namespace
declare namespace Database {
  export type Database = BetterSqlite3.Database;
  export type Statement<B extends unknown[] | object = unknown[], R = unknown> = BetterSqlite3.Statement<B, R>;
  export type Options = BetterSqlite3.Options;
}
export default Database;

/** A pragma whose value is a number (page_size, user_version, data_version, busy_timeout), checked to be one. */
export function pragmaNumber(db: { pragma(source: string, options: { simple: true }): unknown }, name: string): number {
  const value = db.pragma(name, { simple: true });
  if (typeof value !== 'number') throw new Error(`PRAGMA ${name} gave ${typeof value}, not a number`);
  return value;
}

/**
 * A reader of `PRAGMA data_version` (it changes whenever another connection commits), its
 * statement prepared once: `db.pragma` prepares one at each call, and the change watcher and the
 * checkpoint thread ask every few seconds for as long as the service runs.
 */
export function dataVersionReader(db: Database): () => number {
  const statement = db.prepare<[], unknown>('PRAGMA data_version').pluck();
  return () => {
    const value = statement.get();
    if (typeof value !== 'number') throw new Error(`PRAGMA data_version gave ${typeof value}, not a number`);
    return value;
  };
}
