// When the writer is asked to make the WAL start over, or to give its space back (db/wal-limits.ts).
import { WAL_LIMITS, checkpointNeeded } from '../../db/wal-limits';

describe('checkpointNeeded', () => {
  const limits = { restartBytes: 100, maxBytes: 1000, freeShare: 0.25, writerWaitMs: 100, busyBackoffMs: 1000 };
  it('TRUNCATE for a file past the size limit or past a share of the free space; never for an empty file', () => {
    expect(checkpointNeeded(0, 1001, 1e12, limits)).toBe('TRUNCATE');
    expect(checkpointNeeded(0, 300, 1000, limits)).toBe('TRUNCATE'); // a small disk: 300 > 1000 / 4
    expect(checkpointNeeded(0, 0, 0, limits)).toBe(null);
    expect(checkpointNeeded(0, 300, 1000, { ...limits, freeShare: 0 })).toBe(null);
  });
  it('RESTART once the WAL holds restartBytes since it last started over, whatever the size of the file', () => {
    expect(checkpointNeeded(100, 999, 1e12, limits)).toBe('RESTART');
    expect(checkpointNeeded(99, 999, 1e12, limits)).toBe(null);
    expect(checkpointNeeded(100, 2000, 1e12, limits)).toBe('TRUNCATE');
  });

  it("with the service's limits: start over every 16 MB, give the space back past 1 GB or a quarter of the free space", () => {
    const MB = 1048576;
    expect(checkpointNeeded(16 * MB - 1, 20 * MB, 100_000 * MB, WAL_LIMITS)).toBe(null);
    expect(checkpointNeeded(16 * MB, 20 * MB, 100_000 * MB, WAL_LIMITS)).toBe('RESTART');
    expect(checkpointNeeded(0, 1024 * MB + 1, 100_000 * MB, WAL_LIMITS)).toBe('TRUNCATE');
    expect(checkpointNeeded(0, 26 * MB, 100 * MB, WAL_LIMITS)).toBe('TRUNCATE');
    expect(checkpointNeeded(0, 24 * MB, 100 * MB, WAL_LIMITS)).toBe(null);
  });
});
