// The emulated sorter with a recording link in place of the PLC link: items, decisions, destinations.
import type { PlcLink } from '../../emulator/plc-link';
import { EmulatedSorter, defaultSorterOptions, type SorterOptions } from '../../emulator/sorter';
import { decodeData, type TelegramType } from '../../bench/v1-codec';
import { defaultWire } from '../../lib/layout/wire';
import { decisionLogRows } from '../helpers/emulator';

/** Run an emulated sorter with no host for a moment; return the telegrams it produced. */
async function produced(seed: number): Promise<Array<{ type: TelegramType; data: string }>> {
  const sent: Array<{ type: TelegramType; data: string }> = [];
  const link = { wire: defaultWire(), sendData: (type: TelegramType, data: string) => sent.push({ type, data }) } as unknown as PlcLink;
  const sorter = new EmulatedSorter(link, { ...defaultSorterOptions, seed, rate: 500, noReadRate: 0.2 });
  sorter.start();
  await new Promise((r) => setTimeout(r, 120));
  sorter.stop();
  return sent;
}

describe('EmulatedSorter', () => {
  it('the same seed gives the same items; another seed other items', async () => {
    const [a, b, c] = [await produced(7), await produced(7), await produced(8)];
    const requests = (s: typeof a) =>
      s
        .filter((x) => x.type === 'REQU')
        .slice(0, 30)
        .map((x) => x.data);
    expect(requests(a).length).toBe(30);
    expect(requests(a)).toEqual(requests(b));
    expect(requests(a)).not.toEqual(requests(c));
  });

  it('reports every destination at start and produces realistic items, some of them no-reads', async () => {
    const sent = await produced(3);
    const scans = sent.filter((x) => x.type === 'SCAN').map((x) => decodeData('SCAN', x.data));
    expect(scans.slice(0, 20).map((s) => s.Destination)).toEqual(
      Array.from({ length: 20 }, (_, i) => `D${String(i + 1).padStart(3, '0')}`),
    );
    const items = sent.filter((x) => x.type === 'REQU').map((x) => decodeData('REQU', x.data));
    expect(items.length).toBeGreaterThan(20);
    expect(items.some((i) => i.Barcode === 'NOREAD')).toBe(true);
    for (const i of items) {
      expect(i.TrackID).toMatch(/^\d{10}$/);
      expect(i.Barcode === 'NOREAD' || /^\d{13}$/.test(i.Barcode as string)).toBe(true);
      expect(i.Weight).toBeGreaterThan(0);
      expect(i.RecirculationCount).toBe(0);
    }
  });
});

/**
 * An emulated sorter at 500 items/s, run for `ms` with a host that answers each REQUEST with D001
 * after `delayFor(ms since the start)` ms (0: at once, null: never); returned stopped.
 */
async function answeredSorter(
  options: Partial<SorterOptions>,
  delayFor: (sinceStartMs: number) => number | null,
  ms: number,
): Promise<EmulatedSorter> {
  const wire = defaultWire();
  const timers: NodeJS.Timeout[] = [];
  const sorterRef: { current?: EmulatedSorter } = {};
  const started = performance.now();
  const link = {
    wire,
    sendData: (type: TelegramType, data: string) => {
      if (type !== 'REQU') return;
      const delay = delayFor(performance.now() - started);
      if (delay === null) return;
      const trackId = String(decodeData('REQU', data).TrackID);
      const answer = () =>
        sorterRef.current?.onData({ type: 'ASGN', data: wire.encodeData('ASGN', { TrackID: trackId, Destination: 'D001' }) } as never);
      if (delay > 0) timers.push(setTimeout(answer, delay));
      else answer();
    },
  } as unknown as PlcLink;
  const sorter = new EmulatedSorter(link, { ...defaultSorterOptions, seed: 5, rate: 500, ...options });
  sorterRef.current = sorter;
  sorter.start();
  await new Promise((r) => setTimeout(r, ms));
  sorter.stop();
  timers.forEach(clearTimeout);
  return sorter;
}

describe('EmulatedSorter decision figures', () => {
  /**
   * A sorter at 500 items/s whose host answers the REQUESTs of the first 60 ms 40 ms late and the
   * others at once; its decision maximum (ms).
   */
  async function decisionMax(measureAfterMs: number): Promise<number | null> {
    const sorter = await answeredSorter({ measureAfterMs }, (t) => (t < 60 ? 40 : 0), 200);
    return sorter.decisionSummary().decision_max_ms;
  }

  it('--measure-after leaves the REQUESTs of the warm-up out of the decision figures, and only those', async () => {
    expect(await decisionMax(0)).toBeGreaterThanOrEqual(39);
    const measured = await decisionMax(100);
    expect(measured).not.toBeNull();
    // Below the warm-up's 40 ms answers, whatever a loaded machine adds to the immediate ones.
    expect(measured).toBeLessThan(39);
  });
});

describe('EmulatedSorter measured window', () => {
  /**
   * A sorter at 500 items/s, a 20 ms decision window and loop, whose host leaves every REQUEST of
   * the first 100 ms unanswered (those items go round) and answers the later ones at once.
   */
  async function counts(measureAfterMs: number): Promise<{ all: number; measured: number; recirculated: number }> {
    const sorter = await answeredSorter({ decisionWindowMs: 20, loopMs: 20, measureAfterMs }, (t) => (t < 100 ? null : 0), 300);
    const s = sorter.stats;
    return { all: s.sorted_as_assigned, measured: s.sorted_as_assigned_measured, recirculated: s.recirculated };
  }

  it('counts the items inducted after --measure-after that were sorted as assigned, not those that went round before it', async () => {
    const whole = await counts(0);
    expect(whole.measured).toBe(whole.all);

    const c = await counts(100);
    // The first 100 ms's items went round, were answered on a later pass and sorted: in the count of all only.
    expect(c.recirculated).toBeGreaterThan(10);
    expect(c.measured).toBeGreaterThan(10);
    expect(c.all - c.measured).toBeGreaterThan(10);
  });
});

describe('EmulatedSorter decision log (--decision-log)', () => {
  it('keeps every sample of the decision figures, each with when its REQUEST was sent: the slow ones where they were', async () => {
    // The REQUESTs of the first 60 ms answered 40 ms late, the rest at once.
    const sorter = await answeredSorter({ keepDecisions: true }, (t) => (t < 60 ? 40 : 0), 200);
    const csv = sorter.decisionLog()!;
    const rows = decisionLogRows(csv);
    expect(rows.length).toBe(sorter.stats.assignments);
    expect(rows.length).toBeGreaterThan(50);
    // Their maximum is the summary's (rounded alike), and the slow ones are those sent first.
    expect(Math.max(...rows.map((r) => r[1]))).toBeCloseTo(sorter.decisionSummary().decision_max_ms!, 1);
    const slow = rows.filter((r) => r[1] >= 39);
    expect(slow.length).toBeGreaterThan(5);
    expect(Math.max(...slow.map((r) => r[0]))).toBeLessThan(0.08);
    expect(rows.every((r) => r[0] >= 0 && r[2] === 0)).toBe(true);
  });

  it('leaves out what the figures leave out (--measure-after), and is not kept unless asked for', async () => {
    const measured = await answeredSorter({ keepDecisions: true, measureAfterMs: 100 }, (t) => (t < 60 ? 40 : 0), 200);
    const rows = decisionLogRows(measured.decisionLog()!);
    expect(rows.length).toBeGreaterThan(20);
    expect(Math.min(...rows.map((r) => r[0]))).toBeGreaterThanOrEqual(0.1);
    expect((await answeredSorter({}, () => 0, 50)).decisionLog()).toBeNull();
  });
});
