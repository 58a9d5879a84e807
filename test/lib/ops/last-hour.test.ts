// The last hour's samples: rates from the totals' differences, decisions per interval, the window kept, the rates over the last minute.
import { LastHour, type Reading } from '../../../lib/ops/last-hour';

const reading = (s: number, over: Partial<Reading> = {}): Reading => ({
  at: new Date(Date.UTC(2026, 10, 27, 9, 0, s)),
  requests: 0,
  in: { sortation: 0, destination: 0 },
  out: { sortation: 0, destination: 0 },
  telegramsIn: 0,
  telegramsOut: 0,
  depth: { sortation: 0, destination: 0 },
  oldestAgeSeconds: null,
  linkUp: true,
  ...over,
});

describe('LastHour', () => {
  it('turns totals into rates per second over each interval, with the decisions made in it', () => {
    const h = new LastHour(1000, 3);
    expect(h.record(reading(0, { requests: 100, in: { sortation: 200, destination: 5 } }))).toBeNull();
    for (const ms of [5, 7, 9, 1500]) h.decided(ms);
    const s = h.record(
      reading(10, {
        requests: 250,
        in: { sortation: 500, destination: 5 },
        out: { sortation: 280, destination: 0 },
        telegramsIn: 600,
        telegramsOut: 300,
        depth: { sortation: 3, destination: 0 },
        oldestAgeSeconds: 0.44,
        linkUp: false,
      }),
    )!;
    expect(s).toEqual({
      At: '2026-11-27T09:00:10.000Z',
      Seconds: 10,
      Items: 15,
      In: { sortation: 30, destination: 0 },
      Out: { sortation: 28, destination: 0 },
      TelegramsIn: 60,
      TelegramsOut: 30,
      Decisions: 4,
      DecisionP50Ms: 9,
      DecisionP99Ms: 1500,
      LateDecisions: 1,
      Depth: { sortation: 3, destination: 0 },
      OldestAgeSeconds: 0.4,
      LinkUp: 0,
    });
    // The next interval starts empty of decisions.
    expect(
      h.record(reading(20, { requests: 250, in: { sortation: 500, destination: 5 }, out: { sortation: 280, destination: 0 } })),
    ).toMatchObject({ Items: 0, Decisions: 0, DecisionP50Ms: null, LateDecisions: 0, LinkUp: 1 });
  });

  it('keeps the last samples only, oldest first, and gives the rates over the last seconds asked', () => {
    const h = new LastHour(1000, 3);
    h.record(reading(0));
    // 10/s, 20/s, 30/s, 40/s in the sortation queue over four 10 s intervals.
    let total = 0;
    for (let i = 1; i <= 4; i++) h.record(reading(i * 10, { in: { sortation: (total += i * 100), destination: 0 } }));
    expect(h.samples().map((x) => x.In.sortation)).toEqual([20, 30, 40]);
    expect(h.rates(20)).toMatchObject({ Seconds: 20, In: { sortation: 35, destination: 0 } });
    // Asked for more than it holds: over what it holds.
    expect(h.rates(60)).toMatchObject({ Seconds: 30, In: { sortation: 30 } });
    // A first sample of 40 ms (the beat's first call can come half a period after the start): its rates cover 0.04 s, not 0.
    const short = new LastHour(100);
    short.record(reading(0));
    short.record(reading(0, { at: new Date(Date.UTC(2026, 10, 27, 9, 0, 0, 40)), out: { sortation: 1, destination: 0 } }));
    expect(short.rates(60)).toMatchObject({ Seconds: 0.04, Out: { sortation: 25 } });
    expect(new LastHour(1000).rates(60)).toEqual({
      Seconds: 0,
      Items: 0,
      TelegramsIn: 0,
      TelegramsOut: 0,
      In: { sortation: 0, destination: 0 },
      Out: { sortation: 0, destination: 0 },
    });
  });
});
