// The disk's watch on a real SQLite file: the projection, said once when the age bound cannot be
// met (and once when it is met again), the disk Low said once, and what /status shows.
import type { BoundSettings, StorageMeasure } from '../../../db/history-bound';
import { createHistoryStore } from '../../../db/history-store';
import { measureStorage } from '../../../db/storage-use';
import { StorageWatch } from '../../../lib/ops/storage-watch';
import { freshDb } from '../../helpers/db';
import { capturingLogger } from '../../helpers/log';

const NOW = new Date('2026-11-21T12:00:00.000Z');

/** `n` delivered VERIFYs spread evenly over the `days` before NOW. */
function history(db: ReturnType<typeof freshDb>['db'], n: number, days: number) {
  const insert =
    db.prepare(`INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination, payload, received_at, delivered_at)
    VALUES ('sortation', ?, 'VERIFY', 212, ?, '4006381333931', 'D12', '[]', ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const at = new Date(NOW.getTime() - days * 86_400_000 + (i * days * 86_400_000) / (n - 1)).toISOString();
      insert.run(i, String(i).padStart(10, '0'), at, at);
    }
  })();
}

const settings = (over: Partial<BoundSettings> = {}): BoundSettings => ({
  maxBytes: null,
  maxDiskShare: 0.4,
  keepFreeShare: 0,
  retentionDays: 30,
  walAllowanceBytes: 0,
  trafficLogMaxBytes: 0,
  ...over,
});

describe('StorageWatch', () => {
  it('projects the days that fit; says once that the age bound cannot be met, and once that it is met again', () => {
    const ctx = freshDb();
    try {
      const store = createHistoryStore(ctx.db);
      const { log, lines } = capturingLogger();
      let s = settings();
      const watch = new StorageWatch(
        s,
        () => measureStorage(ctx.db, store, { database: ctx.file }),
        (share) => store.timeAtShare(share),
        () => NOW,
        log,
      );
      // Nothing to project from yet.
      watch.logProjection('start');
      expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/too little history yet to project the days that fit$/)]);
      expect(watch.status()).toMatchObject({ Rows: 0, BytesPerDay: null, DaysFit: null, RetentionMet: null, Cuts: 0, LastCut: null });
      // Two days of history; a bound that holds about 5 of them (its pages in use x 2.5).
      history(ctx.db, 5000, 2);
      store.checkpoint('TRUNCATE'); // the WAL counts in the bound: empty, as after a start
      const used = watch.look().measure.usedDatabaseBytes;
      s = settings({ maxBytes: Math.round(used * 2.5) });
      const bounded = new StorageWatch(
        s,
        () => measureStorage(ctx.db, store, { database: ctx.file }),
        (share) => store.timeAtShare(share),
        () => NOW,
        log,
      );
      lines.length = 0;
      const look = bounded.look();
      bounded.look();
      bounded.logProjection('hourly');
      expect(look.cutoff).toBeNull();
      expect(look.projection!.daysFit).toBeCloseTo(5, 1);
      expect(look.projection!.retentionMet).toBe(false);
      // It fills up in about 3 days.
      expect(Date.parse(look.projection!.sizeCutsFrom!) - NOW.getTime()).toBeCloseTo(3 * 86_400_000, -7);
      const warnings = lines.filter((l) => l.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toMatch(
        /^history: HistoryRetentionDays 30 cannot be met: at the current rate \([\d.]+ MB a day\) only 5\.0 days fit in the size bound/,
      );
      expect(lines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual([
        expect.stringMatching(
          /^history: 5\.0 days fit in the size bound at the current rate .* HistoryRetentionDays 30 cannot be met: the size bound cuts the history from /,
        ),
      ]);
      expect(bounded.status()).toMatchObject({
        BoundBytes: s.maxBytes,
        BoundBy: 'HistoryMaxBytes',
        Rows: 5000,
        RetentionDays: 30,
        RetentionMet: false,
        MeasuredAt: NOW.toISOString(),
      });
      // A shorter retention: met, said once.
      const met = new StorageWatch(
        { ...s, retentionDays: 3 },
        () => measureStorage(ctx.db, store, { database: ctx.file }),
        (share) => store.timeAtShare(share),
        () => NOW,
        log,
      );
      lines.length = 0;
      met.look();
      expect(lines).toEqual([]);
    } finally {
      ctx.dispose();
    }
  });

  it('a cut that leaves too short a history to measure a rate: the rate last measured stands in, and nothing is said again; an empty history has none', () => {
    const ctx = freshDb();
    try {
      const store = createHistoryStore(ctx.db);
      const { log, lines } = capturingLogger();
      history(ctx.db, 5000, 2);
      store.checkpoint('TRUNCATE');
      const measure = () => measureStorage(ctx.db, store, { database: ctx.file });
      const s = settings({ maxBytes: Math.round(measure().usedDatabaseBytes * 2.5) });
      const watch = new StorageWatch(
        s,
        measure,
        (share) => store.timeAtShare(share),
        () => NOW,
        log,
      );
      const before = watch.look().projection!;
      expect(before.retentionMet).toBe(false);
      // All but the last row gone (what a bound that holds seconds of history does at each cut).
      ctx.db.prepare('DELETE FROM delivered_history WHERE delivered_at < ?').run(new Date(NOW.getTime() - 5000).toISOString());
      const after = watch.look();
      expect(after.measure.history.rows).toBe(1);
      expect(after.projection).toMatchObject({ bytesPerDay: before.bytesPerDay, retentionMet: false });
      expect(watch.status()).toMatchObject({ Rows: 1, BytesPerDay: before.bytesPerDay, RetentionMet: false });
      expect(lines.filter((l) => /HistoryRetentionDays/.test(l.msg)).map((l) => l.level)).toEqual([40]);
      // A watch that never measured a rate has none to stand in.
      expect(
        new StorageWatch(
          s,
          measure,
          (share) => store.timeAtShare(share),
          () => NOW,
          log,
        ).look().projection,
      ).toBeNull();
      // Nor is one kept once the history is empty.
      ctx.db.prepare('DELETE FROM delivered_history').run();
      expect(watch.look().projection).toBeNull();
      expect(watch.status()).toMatchObject({ Rows: 0, BytesPerDay: null, DaysFit: null, RetentionMet: null });
    } finally {
      ctx.dispose();
    }
  });

  it('a bound that leaves the history nothing beside the WAL and the traffic log: said once, as an error', () => {
    const ctx = freshDb();
    try {
      const store = createHistoryStore(ctx.db);
      const { log, lines } = capturingLogger();
      const watch = new StorageWatch(
        settings({ maxBytes: 2 * 1048576, trafficLogMaxBytes: 60 * 1048576 }),
        () => measureStorage(ctx.db, store, { database: ctx.file }),
        (share) => store.timeAtShare(share),
        () => NOW,
        log,
      );
      watch.look();
      watch.look();
      expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual([
        expect.stringMatching(
          /^history: the size bound \(2\.0 MB by HistoryMaxBytes\) leaves the database nothing beside the WAL .* no history is kept/,
        ),
      ]);
    } finally {
      ctx.dispose();
    }
  });

  it('the disk Low below the reserve: said once as an error, Ok again once', () => {
    const ctx = freshDb();
    try {
      const store = createHistoryStore(ctx.db);
      const { log, lines } = capturingLogger();
      let free = 50e9;
      const measure = (): StorageMeasure => ({
        ...measureStorage(ctx.db, store, { database: ctx.file }),
        fileSystemBytes: 100e9,
        freeBytes: free,
      });
      const watch = new StorageWatch(
        settings({ keepFreeShare: 0.1 }),
        measure,
        (share) => store.timeAtShare(share),
        () => NOW,
        log,
      );
      watch.look();
      expect(watch.diskStatus()).toEqual({ State: 'Ok', FreeBytes: 50e9, SizeBytes: 100e9, LowBelowBytes: 10e9 });
      free = 9e9;
      watch.look();
      watch.look();
      expect(watch.diskStatus().State).toBe('Low');
      expect(watch.status().BoundBy).toBe('HistoryKeepFreeShare');
      free = 11e9;
      watch.look();
      expect(lines.map((l) => [l.level, l.msg.slice(0, 14)])).toEqual([
        [50, 'disk low: 8583'],
        [30, 'disk Ok again:'],
      ]);
    } finally {
      ctx.dispose();
    }
  });
});
