// The benchmark's history size (--site-rate, --card-gb): an item's history measured in a real
// database file, and the days that fit on a card under the default bound.
import { DEFAULT_CARDS_GB, cardTable, describeHistorySize, historyBytesPerItem, historySize, parseCards } from '../../bench/history-size';

describe('bench: the history size', () => {
  it('measures what an item keeps in the database file through the service stores', () => {
    const bytes = historyBytesPerItem(2000);
    // A REQUEST and a VERIFY delivered and an assignment's fate, on 512-byte pages, with their TrackID indexes.
    expect(bytes).toBeGreaterThan(300);
    expect(bytes).toBeLessThan(900);
  });

  it('projects the days that fit on each card: the default share of the card, less the WAL and the traffic log', () => {
    // 600 bytes an item at 30 items/s: 1.5552 GB a day. A 32 GB card: 40% is 12.8 GB, less 64 MB
    // for the WAL and 60 MB for the traffic log (10 MB x 6 files).
    const [c16, c32] = cardTable(600, 30, [16, 32]);
    expect(c32).toEqual({ cardGb: 32, boundGb: 12.8, daysFit: Math.round(((12.8e9 - 64 * 1048576 - 60 * 1048576) / 1.5552e9) * 10) / 10 });
    expect(c16!.daysFit).toBeCloseTo(c32!.daysFit / 2, 0);
  });

  it('says the bytes, the GB a day, the days on each card and the smallest card that keeps the retention', () => {
    const h = historySize(30, DEFAULT_CARDS_GB, 1000);
    expect(h.cards.map((c) => c.cardGb)).toEqual([16, 32, 64]);
    expect(h.gbPerDay).toBeCloseTo((h.bytesPerItem * 30 * 86400) / 1e9, 1);
    expect(h.retentionFitsFromGb).toBeGreaterThan(64);
    expect(describeHistorySize(h)).toMatch(
      /^history at 30 items\/s around the clock: \d+ bytes an item in the database file, [\d.]+ GB a day; .*16 GB card [\d.]+ days, 32 GB card [\d.]+ days, 64 GB card [\d.]+ days; HistoryRetentionDays 30 fits from a \d+ GB card$/,
    );
  });

  it('--card-gb takes positive sizes, comma-separated', () => {
    expect(parseCards(undefined)).toEqual([16, 32, 64]);
    expect(parseCards('8, 128')).toEqual([8, 128]);
    for (const bad of ['', 'big', '16,0', '-4']) expect(parseCards(bad)).toMatch(/^takes card sizes in GB, comma-separated/);
  });
});
