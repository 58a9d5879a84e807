// The page log of the preloaded shim read back (npm run wal-pages): frames by page and B-tree,
// commits, syncs, and the 4 KB blocks a sync makes the kernel write.
import { byBtree, readPageLog } from '../../bench/page-log';

// 1,024-byte pages: a frame is 24 + 1,024 bytes, so four frames cross a 4 KB block.
const FRAME = 24 + 1024;
const w = (page: number, commit: number, frame: number) => `W ${page} ${commit} ${32 + frame * FRAME}`;

describe('readPageLog', () => {
  it('counts frames by page and commits by their last frame', () => {
    const log = readPageLog([w(5, 0, 0), w(7, 0, 1), w(1, 40, 2), w(5, 40, 3), 'S wal', ''].join('\n'), 1024);
    expect([...log.frames]).toEqual([
      [5, 2],
      [7, 1],
      [1, 1],
    ]);
    expect(log.commits).toBe(2);
    expect(log.walSyncs).toBe(1);
  });

  it('a block rewritten after a sync is dirtied again: two syncs of neighbouring frames cost two blocks, not one', () => {
    const oneSync = readPageLog([w(5, 9, 0), w(6, 9, 1), 'S wal'].join('\n'), 1024);
    const twoSyncs = readPageLog([w(5, 9, 0), 'S wal', w(6, 9, 1), 'S wal'].join('\n'), 1024);
    expect(oneSync.walBlocks).toBe(1);
    expect(twoSyncs.walBlocks).toBe(2);
    // A frame that crosses a block boundary dirties both (frame 3 spans bytes 3,176 to 4,223).
    expect(readPageLog([w(5, 9, 3), 'S wal'].join('\n'), 1024).walBlocks).toBe(2);
  });

  it('checkpoint writes count the pages they copy and the blocks of the database file they dirty', () => {
    const log = readPageLog(['D 1024 0', 'D 2048 4096', 'S db'].join('\n'), 1024);
    expect([...log.copied]).toEqual([
      [1, 1],
      [5, 1],
      [6, 1],
    ]);
    expect(log.dbBlocks).toBe(2);
    expect(log.dbSyncs).toBe(1);
  });
});

describe('byBtree', () => {
  it('sums pages into the B-tree that owns them, the biggest first; page 1 is the schema', () => {
    const owner = new Map([
      [5, 'sortation_queue'],
      [6, 'sortation_queue'],
      [7, 'outbox'],
    ]);
    expect(
      byBtree(
        new Map([
          [5, 2],
          [6, 1],
          [7, 4],
          [1, 3],
          [99, 1],
        ]),
        owner,
      ),
    ).toEqual([
      ['outbox', 4],
      ['sortation_queue', 3],
      ['sqlite_schema', 3],
      ['free or gone', 1],
    ]);
  });
});
