// The history's size (npm run bench -- --site-rate N [--card-gb 16,32,64]): the bytes an item's
// history keeps in the database file, written through the service's own stores, and the days of
// history that fit on a card of each size under the default size bound at the site's rate.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../db/connection';
import { lookAtBound, walAllowance } from '../db/history-bound';
import { createOutboxStore } from '../db/outbox-store';
import { createQueueStore } from '../db/queue-store';
import { usedDatabaseBytes } from '../db/storage-use';
import { WAL_LIMITS } from '../db/wal-limits';
import { validateConfig } from '../lib/process/config';
import { SAMPLE_BARCODE, SAMPLE_DESTINATION, sampleRequest, sampleVerify } from './sample-item';

/** The sortation queue's head: there is one, the item's two messages were just enqueued. */
function headOf(queue: ReturnType<typeof createQueueStore>) {
  const head = queue.head('sortation', []);
  if (!head) throw new Error('history size: the sortation queue is empty after an enqueue');
  return head;
}

/** The cards the table shows unless --card-gb names others. */
export const DEFAULT_CARDS_GB = [16, 32, 64];

/** What the history of one item keeps in the file, and a day of it at the site's rate. */
export interface HistorySize {
  items: number;
  bytesPerItem: number;
  siteRate: number;
  gbPerDay: number;
  /** Under the default bound (HistoryMaxDiskShare of the card), per card. */
  cards: Array<{ cardGb: number; boundGb: number; daysFit: number }>;
  retentionDays: number;
  /** The smallest card among those of 8 GB steps up to 1 TB on which the default HistoryRetentionDays fits; null if none. */
  retentionFitsFromGb: number | null;
}

/**
 * Write `items` items' history through the service's stores (a REQUEST and a VERIFY delivered, an
 * assignment acknowledged by the sorter: what the service keeps of a sorted item) into a new
 * database, and divide the pages it added by the items.
 */
export function historyBytesPerItem(items: number): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
  try {
    const db = openDatabase(path.join(dir, 'history.db'), { synchronous: 'NORMAL' });
    const queue = createQueueStore(db);
    const outbox = createOutboxStore(db);
    const empty = usedDatabaseBytes(db);
    const T0 = Date.now();
    // One item a transaction, as the service commits them (its pages filled the way they are in the service).
    const item = db.transaction((i: number) => {
      const t = String(i).padStart(10, '0');
      const at = new Date(T0 + i * 33).toISOString();
      queue.enqueue([sampleRequest(t), sampleVerify(t)], at);
      queue.deliver(headOf(queue), { deliveredAt: at, clientAddress: '10.20.0.9', readProof: 'NextRequest' });
      queue.deliver(headOf(queue), { deliveredAt: at, clientAddress: '10.20.0.9', readProof: 'NextRequest' });
      outbox.removeFromOutbox(
        outbox.addToOutbox(
          { kind: 'ASSIGNMENT', body: { TrackID: t, Barcode: SAMPLE_BARCODE, Destination: SAMPLE_DESTINATION } },
          '10.20.0.9',
          at,
        ),
      );
    });
    for (let i = 0; i < items; i++) item(i);
    const bytes = usedDatabaseBytes(db) - empty;
    db.close();
    return Math.round(bytes / items);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The days of history at `bytesPerItem` and `rate` items/s around the clock that fit on each card under the default bound. */
export function cardTable(bytesPerItem: number, rate: number, cardsGb: number[]): HistorySize['cards'] {
  const defaults = validateConfig({});
  const perDay = bytesPerItem * rate * 86_400;
  const settings = {
    maxBytes: null,
    maxDiskShare: defaults.HistoryMaxDiskShare,
    keepFreeShare: defaults.HistoryKeepFreeShare,
    retentionDays: defaults.HistoryRetentionDays,
    walAllowanceBytes: walAllowance(WAL_LIMITS),
    trafficLogMaxBytes: defaults.Sorter.TrafficLogMaxBytes * (defaults.Sorter.TrafficLogFiles + 1),
  };
  return cardsGb.map((cardGb) => {
    // A card of N GB holds a file system of about N x 10^9 bytes; the card otherwise empty (its system elsewhere).
    const size = cardGb * 1e9;
    const look = lookAtBound(settings, {
      databaseBytes: 0,
      walBytes: 0,
      trafficLogBytes: 0,
      usedDatabaseBytes: 0,
      fileSystemBytes: size,
      freeBytes: size,
      history: { rows: 0, oldestAt: null, newestAt: null },
    });
    return {
      cardGb,
      boundGb: Math.round((look.boundBytes ?? 0) / 1e8) / 10,
      daysFit: Math.round(((look.databaseBudgetBytes ?? 0) / perDay) * 10) / 10,
    };
  });
}

/** Measure an item's history and project it for the site's rate and the cards. */
export function historySize(siteRate: number, cardsGb: number[], items = 20_000): HistorySize {
  const bytesPerItem = historyBytesPerItem(items);
  const retentionDays = validateConfig({}).HistoryRetentionDays;
  const steps = Array.from({ length: 128 }, (_, i) => (i + 1) * 8);
  const fits = cardTable(bytesPerItem, siteRate, steps).find((c) => c.daysFit >= retentionDays);
  return {
    items,
    bytesPerItem,
    siteRate,
    gbPerDay: Math.round(((bytesPerItem * siteRate * 86_400) / 1e9) * 100) / 100,
    cards: cardTable(bytesPerItem, siteRate, cardsGb),
    retentionDays,
    retentionFitsFromGb: fits?.cardGb ?? null,
  };
}

/** `--card-gb 16,32,64`: positive numbers, or the problem as one line. */
export function parseCards(value: string | undefined): number[] | string {
  if (value === undefined) return DEFAULT_CARDS_GB;
  const cards = value.split(',').map((v) => Number(v.trim()));
  if (value.trim() === '' || cards.some((c) => !Number.isFinite(c) || c <= 0))
    return `takes card sizes in GB, comma-separated (e.g. 16,32,64); got ${JSON.stringify(value)}`;
  return cards;
}

/** The lines a reader looks at. */
export function describeHistorySize(h: HistorySize): string {
  const cards = h.cards.map((c) => `${c.cardGb} GB card ${c.daysFit} days`).join(', ');
  return `history at ${h.siteRate} items/s around the clock: ${h.bytesPerItem} bytes an item in the database file, ${h.gbPerDay} GB a day; under the default bound (HistoryMaxDiskShare of the card, less the WAL's and the traffic log's allowances): ${cards}; HistoryRetentionDays ${h.retentionDays} fits from a ${h.retentionFitsFromGb ?? '>1024'} GB card`;
}
