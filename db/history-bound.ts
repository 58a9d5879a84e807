// The history bounded by size as well as by age: how much the database, its WAL and the traffic
// log may take on the disk together, when the oldest history must go to stay within that, and how
// many days of history fit at the current rate.
import { WAL_CHECK_INTERVAL_MS } from './checkpointer';
import { WAL_LIMITS, type WalLimits } from './wal-limits';
import type { HistoryExtent } from './history-store';

/** The bound's settings (config.json: HistoryMaxBytes, HistoryMaxDiskShare, HistoryKeepFreeShare, HistoryRetentionDays). */
export interface BoundSettings {
  /** The stores' bound in bytes; null: `maxDiskShare` of the file system's size. */
  maxBytes: number | null;
  maxDiskShare: number;
  /** The history is cut too while less than this share of the file system would stay free. */
  keepFreeShare: number;
  retentionDays: number;
  /** What the WAL may take between two of its start-overs (bytes), whatever its file holds now. */
  walAllowanceBytes: number;
  /** The traffic log at its most: Sorter.TrafficLogMaxBytes x (Sorter.TrafficLogFiles + 1); 0 when it is off. */
  trafficLogMaxBytes: number;
}

/** What the stores take on the disk at one moment (db/storage-use.ts measures it). */
export interface StorageMeasure {
  /** The files' sizes. */
  databaseBytes: number;
  walBytes: number;
  trafficLogBytes: number;
  /** The database's pages in use (page_count less the freelist), in bytes: what its file would hold without the pages the purge freed. */
  usedDatabaseBytes: number;
  /** The file system of the database: its size and what is free; null when unknown. */
  fileSystemBytes: number | null;
  freeBytes: number | null;
  history: HistoryExtent;
}

/** Which setting makes the bound. */
export type BoundBy = 'HistoryMaxBytes' | 'HistoryMaxDiskShare' | 'HistoryKeepFreeShare' | 'None';

/** The bound and what it asks for now. */
export interface BoundLook {
  /** The most the database, its WAL and the traffic log may take together (bytes); null: no bound (the file system unknown). */
  boundBytes: number | null;
  boundBy: BoundBy;
  /** What they take now: the three files' sizes. */
  filesBytes: number;
  /** What the database's pages in use may take: the bound less the WAL's and the traffic log's allowances. */
  databaseBudgetBytes: number | null;
  /** The share of the history's rows, the oldest first, to purge now (0: none). */
  cutShare: number;
  /** Less free than the reserve (HistoryKeepFreeShare, at least LOW_DISK_SHARE of the file system). */
  diskLow: boolean;
  /** The free space below which the disk is Low (bytes); null when unknown. */
  lowBelowBytes: number | null;
}

/** How many days of history fit, at the rate the history itself shows. */
export interface Projection {
  /** Bytes of history a day: the pages in use over the days the history spans. */
  bytesPerDay: number;
  /** Days of history the budget holds at that rate. */
  daysFit: number;
  /** HistoryRetentionDays fits within the size bound. */
  retentionMet: boolean;
  /** When the size bound begins to cut the history short of HistoryRetentionDays (now if it does already); null when it never does. */
  sizeCutsFrom: string | null;
}

/**
 * A cut takes the history down to this share of its budget, so that at a steady rate the next cut
 * comes after a tenth of the budget's days, and each cut is many chunks of the oldest rows rather
 * than a few rows at every look.
 */
export const CUT_TO_SHARE = 0.9;

/** The disk is Low below this share of the file system free, if the reserve (HistoryKeepFreeShare) is smaller. */
export const LOW_DISK_SHARE = 0.02;

/** The projection needs this much history (ms): a rate read from less is noise. */
export const MIN_PROJECTION_SPAN_MS = 10_000;

const DAY_MS = 86_400_000;

/**
 * The bound now, and the share of the history to cut to stay within it until the next look:
 * `aheadBytes` is what the database is expected to grow by meanwhile (what it grew since the last
 * look), so that the cut comes before the pages in use pass the budget, not after.
 */
export function lookAtBound(s: BoundSettings, m: StorageMeasure, aheadBytes = 0): BoundLook {
  const filesBytes = m.databaseBytes + m.walBytes + m.trafficLogBytes;
  const size = m.fileSystemBytes;
  const keepFree = size !== null ? Math.floor(s.keepFreeShare * size) : null;
  const lowBelowBytes = size !== null ? Math.max(keepFree ?? 0, Math.floor(LOW_DISK_SHARE * size)) : null;
  const diskLow = lowBelowBytes !== null && m.freeBytes !== null && m.freeBytes < lowBelowBytes;
  // The configured bound, then the free space: what our files take, plus what is free beyond the
  // reserve (another program filling the disk makes it smaller).
  let boundBytes: number | null = s.maxBytes ?? (size !== null ? Math.floor(s.maxDiskShare * size) : null);
  let boundBy: BoundBy = boundBytes === null ? 'None' : s.maxBytes !== null ? 'HistoryMaxBytes' : 'HistoryMaxDiskShare';
  if (keepFree !== null && keepFree > 0 && m.freeBytes !== null) {
    const byFree = filesBytes + m.freeBytes - keepFree;
    if (boundBytes === null || byFree < boundBytes) [boundBytes, boundBy] = [Math.max(0, byFree), 'HistoryKeepFreeShare'];
  }
  if (boundBytes === null) return { boundBytes, boundBy, filesBytes, databaseBudgetBytes: null, cutShare: 0, diskLow, lowBelowBytes };
  const databaseBudgetBytes = Math.max(
    0,
    boundBytes - Math.max(m.walBytes, s.walAllowanceBytes) - Math.max(m.trafficLogBytes, s.trafficLogMaxBytes),
  );
  return {
    boundBytes,
    boundBy,
    filesBytes,
    databaseBudgetBytes,
    cutShare: cutShare(m.usedDatabaseBytes, databaseBudgetBytes, m.history.rows, aheadBytes),
    diskLow,
    lowBelowBytes,
  };
}

/**
 * The share of the history's rows to purge, the oldest first, when the pages in use and what they
 * will grow by until the next look (`aheadBytes`) exceed the budget: down to CUT_TO_SHARE of it,
 * less that growth. The rows' bytes are taken as the pages in use over the rows (the queues' few
 * pages counted in: a cut frees a little less than asked, and the next look cuts again). A budget
 * of nothing takes all of it.
 */
export function cutShare(usedBytes: number, budgetBytes: number, rows: number, aheadBytes = 0): number {
  const ahead = Math.max(0, aheadBytes);
  if (rows === 0 || usedBytes + ahead <= budgetBytes) return 0;
  if (budgetBytes <= 0) return 1;
  return Math.min(1, Math.max(0, usedBytes + ahead - budgetBytes * CUT_TO_SHARE) / usedBytes);
}

/**
 * Days of history that fit in the budget at the history's own rate, and when the size bound
 * begins to cut it short; null while it spans too little. `lastBytesPerDay`, the rate of an
 * earlier look, stands in while the history spans too little: a bound that holds only seconds of
 * history leaves less than MIN_PROJECTION_SPAN_MS after each of its cuts, and the projection (and
 * RetentionMet, which an operator's alert watches) must not come and go with them.
 */
export function project(
  s: Pick<BoundSettings, 'retentionDays'>,
  m: StorageMeasure,
  look: BoundLook,
  now: Date,
  lastBytesPerDay: number | null = null,
): Projection | null {
  const { oldestAt, newestAt } = m.history;
  if (oldestAt === null || newestAt === null || look.databaseBudgetBytes === null) return null;
  const spanMs = Date.parse(newestAt) - Date.parse(oldestAt);
  let bytesPerDay: number;
  if (spanMs >= MIN_PROJECTION_SPAN_MS) bytesPerDay = (m.usedDatabaseBytes / spanMs) * DAY_MS;
  else if (lastBytesPerDay !== null) bytesPerDay = lastBytesPerDay;
  else return null;
  const daysFit = look.databaseBudgetBytes / bytesPerDay;
  const retentionMet = daysFit >= s.retentionDays;
  const untilFullMs = (Math.max(0, look.databaseBudgetBytes - m.usedDatabaseBytes) / bytesPerDay) * DAY_MS;
  return {
    bytesPerDay: Math.round(bytesPerDay),
    daysFit: Math.round(daysFit * 1000) / 1000,
    retentionMet,
    sizeCutsFrom: retentionMet ? null : new Date(now.getTime() + untilFullMs).toISOString(),
  };
}

/** The smallest bound that keeps the WAL's usual limits; below it the WAL starts over sooner, to leave the history its share. */
const FULL_WAL_BOUND = 16 * WAL_LIMITS.restartBytes;

/**
 * The WAL's limits under a bound: SQLite's WAL starts over from its beginning once it holds
 * `restartBytes`, so its file stays about that large. Under a bound of less than 256 MB it starts
 * over at a sixteenth of the bound (at least 256 KB), and is emptied past four times that.
 */
export function walLimitsFor(boundBytes: number | null): WalLimits {
  if (boundBytes === null || boundBytes >= FULL_WAL_BOUND) return WAL_LIMITS;
  const restartBytes = Math.max(256 * 1024, Math.floor(boundBytes / 16));
  return { ...WAL_LIMITS, restartBytes, maxBytes: 4 * restartBytes };
}

/**
 * What the WAL may take under its limits: it starts over once it holds `restartBytes`, and is
 * emptied past `maxBytes`; between two looks of the checkpoint thread (and during a cut, between
 * two chunks) it passes the first by what the traffic writes meanwhile. Four times the restart
 * size: under a small bound its `maxBytes`, under the usual limits 64 MB.
 */
export const walAllowance = (limits: WalLimits): number => Math.min(limits.maxBytes, 4 * limits.restartBytes);

/** How often the checkpoint thread looks at the WAL's size (ms): under a small bound four times a second, so that it passes its restart size by less. */
export const walCheckMs = (limits: WalLimits): number => (limits.restartBytes < WAL_LIMITS.restartBytes ? 250 : WAL_CHECK_INTERVAL_MS);
