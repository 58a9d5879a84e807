// Latency windows and meters (lib/ops/latency.ts): percentiles of a window that wraps, the wake
// latency of messages that found a client waiting, and the REQUEST-to-assignment decision time.
import { DecisionMeter, LatencyWindow, WakeMeter } from '../../../lib/ops/latency';
import { nth } from '../../helpers/nth';

describe('LatencyWindow', () => {
  it('has no percentiles without samples', () => {
    expect(new LatencyWindow().summary()).toEqual({ P50Ms: null, P99Ms: null, Samples: 0 });
  });

  it('gives p50 and p99 of its samples, rounded to 0.01 ms', () => {
    const w = new LatencyWindow();
    for (let i = 100; i >= 1; i--) w.add(i + 0.004);
    expect(w.summary()).toEqual({ P50Ms: 51, P99Ms: 100, Samples: 100 });
    const one = new LatencyWindow();
    one.add(1.23456);
    expect(one.summary()).toEqual({ P50Ms: 1.23, P99Ms: 1.23, Samples: 1 });
  });

  it('keeps only the latest `size` samples for its percentiles, and counts them all', () => {
    const w = new LatencyWindow(10);
    for (let i = 1; i <= 15; i++) w.add(i * 1000); // the first five are overwritten
    expect(w.summary()).toEqual({ P50Ms: 11_000, P99Ms: 15_000, Samples: 15 });
    expect(w.total).toBe(15);
  });

  it('answers from its last summary until a sample comes, and a caller cannot change that summary', () => {
    const w = new LatencyWindow();
    w.add(5);
    const first = w.summary();
    first.P99Ms = 999; // a caller that edits what it got
    expect(w.summary()).toEqual({ P50Ms: 5, P99Ms: 5, Samples: 1 });
    w.add(100);
    w.add(100);
    expect(w.summary()).toEqual({ P50Ms: 100, P99Ms: 100, Samples: 3 });
  });
});

describe('WakeMeter', () => {
  it('measures from the arrival to the write of the same message, once, and tells observe', () => {
    const seen: number[] = [];
    const wake = new WakeMeter();
    wake.observe = (ms) => seen.push(ms);
    wake.arrived('sortation', 7, performance.now() - 50);
    wake.written('destination', 7); // another queue's message 7: not this one
    wake.written('sortation', 7);
    wake.written('sortation', 7); // a second response for it: already measured
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThanOrEqual(50);
    expect(seen[0]).toBeLessThan(1000);
    expect(wake.window.summary().Samples).toBe(1);
  });

  it('forgets the oldest arrivals past its limit', () => {
    const wake = new WakeMeter(2);
    for (const id of [1, 2, 3]) wake.arrived('sortation', id, performance.now());
    wake.written('sortation', 1);
    expect(wake.window.summary().Samples).toBe(0);
    wake.written('sortation', 3);
    expect(wake.window.summary().Samples).toBe(1);
  });
});

describe('DecisionMeter', () => {
  it('measures from the REQUEST to the accepted assignment of the same item, once', () => {
    const seen: number[] = [];
    const meter = new DecisionMeter((ms) => seen.push(ms));
    meter.requested('0004711', performance.now() - 30);
    meter.assigned('0004712'); // no REQUEST for it
    meter.assigned('0004711');
    meter.assigned('0004711'); // a second assignment: already measured
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThanOrEqual(30);
    expect(meter.recent.list()).toEqual([{ at: expect.any(Number), ms: seen[0] }]);
    expect(Math.abs(nth(meter.recent.list(), 0).at - Date.now())).toBeLessThan(1000);
  });

  it('a newer REQUEST of the same item restarts its clock; the oldest items are forgotten past the limit', () => {
    const seen: number[] = [];
    const meter = new DecisionMeter((ms) => seen.push(ms), { limit: 2 });
    meter.requested('A', performance.now() - 10_000);
    meter.requested('A', performance.now()); // it went round again
    meter.requested('B', performance.now());
    meter.requested('C', performance.now()); // A is forgotten
    meter.assigned('A');
    meter.assigned('C');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeLessThan(5000);
  });

  it('counts a late REQUEST once: unanswered at a look, or answered late between two looks', () => {
    const meter = new DecisionMeter(() => {}, { lateMs: 1000 });
    const t0 = performance.now();
    meter.requested('A', t0 - 1500); // late, still unanswered at the next look
    meter.requested('B', t0 - 1200); // late, answered before the next look
    meter.requested('C', t0 - 500); // answered in time
    meter.requested('D', t0 - 100); // late only after this look
    meter.assigned('B');
    meter.assigned('C');
    expect(meter.late(t0)).toBe(2); // A and B
    expect(meter.late(t0 + 10)).toBe(0); // counted once
    meter.assigned('A'); // its lateness was counted by the look
    expect(meter.late(t0 + 1200)).toBe(1); // D
    expect(meter.status(t0 + 1200)).toMatchObject({ Samples: 3, Awaiting: 1, Late: 3 }); // D still waits
  });

  it('counts a REQUEST told after a look that it arrived before (its commit stalled), at the next look or its assignment', () => {
    const meter = new DecisionMeter(() => {}, { lateMs: 1000 });
    const t0 = performance.now();
    meter.requested('A', t0 - 100);
    expect(meter.late(t0)).toBe(0);
    meter.requested('B', t0 - 1500); // arrived before the look, told after it
    meter.requested('C', t0 - 1400);
    meter.assigned('C');
    expect(meter.late(t0 + 10)).toBe(1); // C; B waits behind A, which is not late yet
    expect(meter.late(t0 + 1200)).toBe(2); // A and B
    expect(meter.status(t0 + 1200).Late).toBe(3);
  });

  it('counts nothing late without a threshold, and the REQUESTs awaiting their assignment forget the oldest', () => {
    const meter = new DecisionMeter(() => {});
    const t0 = performance.now();
    meter.requested('old', t0 - 61_000);
    meter.requested('A', t0 - 5000);
    meter.requested('B', t0 - 10);
    expect(meter.counts(t0)).toEqual({ Awaiting: 2, Late: 0 }); // the oldest not counted, before any look forgets it
    expect(meter.late(t0)).toBe(0);
    expect(meter.status(t0)).toEqual({ P50Ms: null, P99Ms: null, Samples: 0, Awaiting: 2, Late: 0 });
    meter.assigned('A');
    const after = meter.status(t0);
    expect(after).toMatchObject({ Samples: 1, Awaiting: 1, Late: 0 });
    expect(after.P50Ms).toBeGreaterThanOrEqual(5000);
  });

  it('counts a REQUEST late before forgetting it, even with the threshold at its longest (60 s)', () => {
    const meter = new DecisionMeter(() => {}, { lateMs: 60_000 });
    const t0 = performance.now();
    meter.requested('A', t0 - 61_000); // no look saw it between 60 s and 61 s
    meter.requested('B', t0 - 30_000);
    expect(meter.late(t0)).toBe(1);
    expect(meter.status(t0)).toMatchObject({ Awaiting: 1, Late: 1 });
  });

  it('forgets the unanswered REQUESTs at its look without a threshold too', () => {
    const meter = new DecisionMeter(() => {});
    const t0 = performance.now();
    meter.requested('A', t0 - 61_000);
    meter.requested('B', t0 - 10);
    expect(meter.late(t0)).toBe(0);
    meter.assigned('A'); // forgotten: no decision measured
    expect(meter.status(t0)).toEqual({ P50Ms: null, P99Ms: null, Samples: 0, Awaiting: 1, Late: 0 });
  });
});
