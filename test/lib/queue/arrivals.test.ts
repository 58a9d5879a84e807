// When this run's rows arrived (lib/queue/arrivals.ts): the ages and the expiry's bound from the
// marks, two at most a mark interval, never older than the row is; the previous run's rows by
// their stored time; the marks forgotten below the oldest row, and thinned past their bound.
import { Arrivals, StoredAges } from '../../../lib/queue/arrivals';

describe('Arrivals', () => {
  it('knows nothing of rows below the first id recorded, nor of ids not recorded yet', () => {
    const a = new Arrivals(100);
    expect(a.ageMs(5, 1_000)).toBeNull();
    expect(a.arrivedBy(1_000)).toEqual({ upToId: 0, firstId: null });
    a.arrived(10, 0);
    expect(a.ageMs(9, 1_000)).toBeNull();
    expect(a.ageMs(11, 1_000)).toBeNull();
    expect(a.ageMs(10, 1_000)).toBe(1_000);
  });

  it('gives each row an age never older than it is, and within a mark interval of it', () => {
    const a = new Arrivals(100);
    const times = [0, 5, 50, 99, 100, 150, 400, 401, 900];
    times.forEach((t, i) => a.arrived(i + 1, t));
    expect(a.marks).toBeLessThanOrEqual(2 * Math.ceil(900 / 100));
    times.forEach((t, i) => {
      const age = a.ageMs(i + 1, 1_000);
      expect(age).not.toBeNull();
      expect(age!).toBeLessThanOrEqual(1_000 - t);
      expect(age!).toBeGreaterThan(1_000 - t - 100);
    });
  });

  it('says which rows arrived by a time for certain, never one that came later', () => {
    const a = new Arrivals(100);
    const times = [0, 5, 50, 99, 100, 150, 400, 401, 900];
    times.forEach((t, i) => a.arrived(i + 1, t));
    for (let at = -1; at <= 1_000; at += 7) {
      const { upToId, firstId } = a.arrivedBy(at);
      expect(firstId).toBe(1);
      // Every row up to upToId arrived by `at`; the first one after it arrived within a mark interval of `at` or later.
      times.slice(0, upToId).forEach((t) => expect(t).toBeLessThanOrEqual(at));
      const next = times[upToId];
      if (next !== undefined) expect(next).toBeGreaterThan(at - 100);
    }
    expect(a.arrivedBy(900).upToId).toBe(9);
  });

  it('ignores an id that is not above the last one', () => {
    const a = new Arrivals(100);
    a.arrived(3, 0);
    a.arrived(2, 500);
    a.arrived(3, 500);
    expect(a.ageMs(3, 1_000)).toBe(1_000);
    expect(a.arrivedBy(0)).toEqual({ upToId: 3, firstId: 3 });
  });

  it('forgets the marks below the oldest row but the one that bounds it', () => {
    const a = new Arrivals(10);
    for (let i = 1; i <= 100; i++) a.arrived(i, i * 20);
    const before = a.ageMs(60, 5_000);
    a.forgetBelow(60);
    expect(a.marks).toBeLessThanOrEqual(42);
    expect(a.ageMs(60, 5_000)).toBe(before);
    expect(a.ageMs(100, 5_000)).toBe(5_000 - 2_000);
  });

  it('thins its marks past their bound: ages and the expiry only come later, the bound holds', () => {
    const a = new Arrivals(10, 50);
    for (let i = 1; i <= 1_000; i++) a.arrived(i, i * 20);
    expect(a.marks).toBeLessThanOrEqual(50);
    for (let i = 1; i <= 1_000; i += 37) expect(a.ageMs(i, 30_000)!).toBeLessThanOrEqual(30_000 - i * 20);
    for (let at = 0; at <= 20_000; at += 333) {
      const { upToId } = a.arrivedBy(at);
      expect(upToId * 20).toBeLessThanOrEqual(Math.max(at, 0));
    }
    // The newest arrivals keep their marks: the expiry's cutoff, seconds back, is as fine as ever.
    expect(a.ageMs(999, 30_000)).toBe(30_000 - 999 * 20);
    expect(a.arrivedBy(19_990).upToId).toBe(999);
  });
});

describe('StoredAges', () => {
  it("counts this run's rows on the clock that never steps, the previous run's from their stored time", () => {
    let wall = Date.parse('2026-11-22T08:00:00.000Z');
    let steady = 0;
    const ages = new StoredAges(
      () => new Date(wall),
      () => steady,
    );
    ages.arrived('sortation', 7, ages.now());
    ages.arrived('outbox', 3, ages.now());
    steady += 2_000;
    wall += 2_000 + 3_600_000; // NTP set the clock an hour forward
    const now = wall;
    expect(ages.queueAgeMs('sortation', { id: 7, receivedAt: '2026-11-22T08:00:00.000Z' }, now)).toBe(2_000);
    expect(ages.outboxAgeMs({ id: 3, createdAt: '2026-11-22T08:00:00.000Z' }, now)).toBe(2_000);
    // Queued before this start (below the first id seen): its stored time is all there is.
    expect(ages.queueAgeMs('sortation', { id: 6, receivedAt: '2026-11-22T09:00:00.000Z' }, now)).toBe(2_000);
    expect(ages.queueAgeMs('destination', { id: 1, receivedAt: '2026-11-22T10:00:00.000Z' }, now)).toBe(0); // never below 0
    expect(ages.queueAgeMs('sortation', null, now)).toBeNull();
    expect(ages.outboxAgeMs(undefined, now)).toBeNull();
    const reads = {
      store: { oldest: (q: string) => (q === 'sortation' ? { id: 7, receivedAt: '2026-11-22T08:00:00.000Z' } : null) },
      outbox: { peek: () => [{ id: 3, createdAt: '2026-11-22T08:00:00.000Z' }] },
    };
    expect(ages.oldestSeconds(reads, now)).toEqual({ sortation: 2, destination: null, outbox: 2 });
    expect(ages.olderThan('sortation', 1_000, now)).toEqual({ upToId: 7, firstId: 7, before: '2026-11-22T09:00:01.000Z' });
    expect(ages.olderThan('destination', 1_000, now)).toEqual({
      upToId: 0,
      firstId: Number.MAX_SAFE_INTEGER,
      before: '2026-11-22T09:00:01.000Z',
    });
  });

  it('counts on the wall clock when it has no clock that never steps (a test driving time by hand)', () => {
    let wall = 1_000_000;
    const ages = new StoredAges(() => new Date(wall));
    ages.arrived('destination', 1, ages.now());
    wall += 500;
    expect(ages.queueAgeMs('destination', { id: 1, receivedAt: new Date(1_000_000).toISOString() }, wall)).toBe(500);
  });
});
