// The change watcher: rows committed by another connection wake waiting polls; it looks only
// while a client waits, and less and less often while nothing changes.
import Database from '../../../db/sqlite';
import type { Db } from '../../../db/connection';
import { watchExternalChanges } from '../../../lib/queue/change-watcher';
import { freshDb } from '../../helpers/db';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const insert = (db: Db, trackId: string) =>
  db
    .prepare(
      `INSERT INTO sortation_queue (type, message_code, track_id, barcode, received_at) VALUES ('VERIFY', 212, '${trackId}', '', 'T')`,
    )
    .run();

/** The reader connection, counting its looks at data_version (a statement the watcher prepares once). */
function counted(db: Db): { db: Db; looks: () => number } {
  let looks = 0;
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    if (!/^PRAGMA data_version$/i.test(source)) return statement;
    const get = statement.get.bind(statement);
    statement.get = ((...params: unknown[]) => ((looks += 1), get(...params))) as typeof statement.get;
    return statement;
  }) as Db['prepare'];
  return { db, looks: () => looks };
}

describe('watchExternalChanges', () => {
  it('notifies waiting targets when another connection commits, and only then', async () => {
    const ctx = freshDb();
    const target = {
      waiting: 1,
      notified: 0,
      notify() {
        this.notified += 1;
      },
    };
    const watch = watchExternalChanges(ctx.db, [target], 20, 20);
    watch.waiting();
    await sleep(80);
    expect(target.notified).toBe(0);
    const other = new Database(ctx.file);
    insert(other, 'x');
    await sleep(80);
    expect(target.notified).toBe(1);
    // Nobody waiting: no notification, even after another commit.
    target.waiting = 0;
    insert(other, 'y');
    await sleep(80);
    expect(target.notified).toBe(1);
    watch.stop();
    other.close();
    ctx.dispose();
  });

  it('backs off while nothing changes, up to idleMs, and looks again within intervalMs after a change', () => {
    // Jest's clock: the pace is checked exactly, where a loaded machine's late timers would blur it.
    jest.useFakeTimers({ now: 1_700_000_000_000 }); // a multiple of 160
    const ctx = freshDb();
    const { db, looks } = counted(ctx.db);
    const target = {
      waiting: 1,
      notified: 0,
      notify() {
        this.notified += 1;
      },
    };
    const watch = watchExternalChanges(db, [target], 10, 160);
    const before = looks(); // its first read of data_version, at the start
    watch.waiting();
    try {
      // At 10, 30, 70 and 150 ms (the wait doubling from 10), then at the clock's multiples of 160:
      // 9 looks in 800 ms rather than 80.
      jest.advanceTimersByTime(800);
      expect(looks() - before).toBe(9);
      // A change is seen at the next multiple of idleMs, and the looks are quick again after it.
      const other = new Database(ctx.file);
      insert(other, 'x');
      jest.advanceTimersByTime(159);
      expect(target.notified).toBe(0);
      jest.advanceTimersByTime(1);
      expect(target.notified).toBe(1);
      insert(other, 'y');
      jest.advanceTimersByTime(9);
      expect(target.notified).toBe(1);
      jest.advanceTimersByTime(1);
      expect(target.notified).toBe(2);
      other.close();
    } finally {
      watch.stop();
      ctx.dispose();
      jest.useRealTimers();
    }
  });

  it('does not look while nobody waits, and a new waiter starts it again at intervalMs', async () => {
    const ctx = freshDb();
    const { db, looks } = counted(ctx.db);
    const target = {
      waiting: 0,
      notified: 0,
      notify() {
        this.notified += 1;
      },
    };
    const watch = watchExternalChanges(db, [target], 10, 1000);
    try {
      const before = looks();
      await sleep(100);
      expect(looks()).toBe(before); // never armed: nobody waited
      target.waiting = 1;
      watch.waiting();
      await sleep(30);
      expect(looks()).toBeGreaterThan(before);
      target.waiting = 0;
      await sleep(100); // the look after the waiter left finds nobody and stops
      const stopped = looks();
      await sleep(200);
      expect(looks()).toBe(stopped);
    } finally {
      watch.stop();
      ctx.dispose();
    }
  });
});
