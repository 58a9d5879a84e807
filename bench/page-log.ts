// The page log of bench/slow-fsync.c (SORTER_PAGELOG_FILE) read back: WAL frames and checkpoint
// copies by page, commits, syncs, and the 4 KB blocks each sync made the kernel write
// (`npm run wal-pages`, docs/performance.md "What it writes to the disk").

/** The kernel's page: the least a write to a file dirties, and what it writes back. */
const BLOCK = 4096;

/** What a stretch of the page log says. */
export interface PageLog {
  /** WAL frames by page number. */
  frames: Map<number, number>;
  /** Pages the checkpoints copied into the database file, by page number. */
  copied: Map<number, number>;
  commits: number;
  walSyncs: number;
  dbSyncs: number;
  /** 4 KB blocks of the WAL and of the database file dirtied between two syncs of that file, summed. */
  walBlocks: number;
  dbBlocks: number;
}

/** Read the shim's lines (W page commit offset / D bytes offset / S wal|db) for pages of `pageSize`. */
export function readPageLog(text: string, pageSize: number): PageLog {
  const log: PageLog = { frames: new Map(), copied: new Map(), commits: 0, walSyncs: 0, dbSyncs: 0, walBlocks: 0, dbBlocks: 0 };
  const dirty = { wal: new Set<number>(), db: new Set<number>() };
  const touch = (set: Set<number>, offset: number, bytes: number) => {
    for (let b = Math.floor(offset / BLOCK); b <= Math.floor((offset + bytes - 1) / BLOCK); b++) set.add(b);
  };
  const add = (m: Map<number, number>, k: number) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const line of text.split('\n')) {
    const [kind, a, b, c] = line.split(' ');
    if (kind === 'W') {
      add(log.frames, Number(a));
      if (Number(b) !== 0) log.commits += 1;
      touch(dirty.wal, Number(c), 24 + pageSize);
    } else if (kind === 'D') {
      const bytes = Number(a);
      const offset = Number(b);
      for (let p = Math.floor(offset / pageSize); p < Math.ceil((offset + bytes) / pageSize); p++) add(log.copied, p + 1);
      touch(dirty.db, offset, bytes);
    } else if (kind === 'S' && a === 'wal') {
      log.walSyncs += 1;
      log.walBlocks += dirty.wal.size;
      dirty.wal.clear();
    } else if (kind === 'S' && a === 'db') {
      log.dbSyncs += 1;
      log.dbBlocks += dirty.db.size;
      dirty.db.clear();
    }
  }
  log.walBlocks += dirty.wal.size;
  log.dbBlocks += dirty.db.size;
  return log;
}

/** Sum counts by page into counts by the B-tree that owns each page (unknown: `page N`). */
export function byBtree(counts: Map<number, number>, owner: Map<number, string>): Array<[string, number]> {
  const out = new Map<string, number>();
  for (const [page, n] of counts) {
    const name = owner.get(page) ?? (page === 1 ? 'sqlite_schema' : 'free or gone');
    out.set(name, (out.get(name) ?? 0) + n);
  }
  return [...out].sort((a, b) => b[1] - a[1]);
}
