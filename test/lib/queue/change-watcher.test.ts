// The change watcher: rows committed by another connection wake waiting polls.
import Database from '../../../db/sqlite';
import { watchExternalChanges } from '../../../lib/queue/change-watcher';
import { freshDb } from '../../helpers/db';

describe('watchExternalChanges', () => {
  it('notifies waiting targets when another connection commits, and only then', async () => {
    const ctx = freshDb();
    const target = { waiting: 1, notified: 0, notify() { this.notified += 1; } };
    const stop = watchExternalChanges(ctx.db, [target], 20);
    await new Promise((r) => setTimeout(r, 80));
    expect(target.notified).toBe(0);
    const other = new Database(ctx.file);
    other.prepare("INSERT INTO sortation_queue (type, message_code, track_id, barcode, received_at) VALUES ('VERIFY', 212, 'x', '', 'T')").run();
    await new Promise((r) => setTimeout(r, 80));
    expect(target.notified).toBe(1);
    // Nobody waiting: no notification, even after another commit.
    target.waiting = 0;
    other.prepare("INSERT INTO sortation_queue (type, message_code, track_id, barcode, received_at) VALUES ('VERIFY', 212, 'y', '', 'T')").run();
    await new Promise((r) => setTimeout(r, 80));
    expect(target.notified).toBe(1);
    stop();
    other.close();
    ctx.dispose();
  });
});
