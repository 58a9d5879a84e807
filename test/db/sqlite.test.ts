import Database, { driverMajor, driverPackage } from '../../db/sqlite';

describe('the SQLite driver for the running Node', () => {
  it('is better-sqlite3 12 on Node 20 and 13 from Node 22 on', () => {
    expect(driverMajor('20.19.0')).toBe(12);
    expect(driverMajor('20.20.2')).toBe(12);
    expect(driverMajor('22.12.0')).toBe(13);
    expect(driverMajor('24.21.0')).toBe(13);
    expect(driverMajor('26.10.0')).toBe(13);
  });

  it('loads the major picked for this process and runs SQL', () => {
    // The package is picked at run time (db/sqlite.ts).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const version: string = require(`${driverPackage}/package.json`).version;
    expect(Number(version.split('.')[0])).toBe(driverMajor(process.versions.node));
    const db = new Database(':memory:');
    try {
      expect(db.prepare('SELECT 40 + ? AS v').get(2)).toEqual({ v: 42 });
    } finally {
      db.close();
    }
  });
});
