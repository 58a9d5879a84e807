// The disk as operators watch it: what the stores take, their size bound, the days of history that
// fit, the disk's free space and its Low state. Looked at every few seconds by the history bound
// (handlers/history-bound.ts); GET /status and /metrics read the last look.
import { type BoundLook, type BoundSettings, type Projection, type StorageMeasure, lookAtBound, project } from '../../db/history-bound';
import type { Logger } from '../process/logger';

/** A look at the disk: the measure, the bound, the projection, and the cutoff of the history to purge now (null: none). */
export interface StorageLook {
  at: Date;
  measure: StorageMeasure;
  bound: BoundLook;
  projection: Projection | null;
  cutoff: string | null;
}

/** A cut of the history by the size bound. */
export interface HistoryCut {
  At: string;
  Rows: number;
  Cutoff: string;
  Chunks: number;
  Ms: number;
}

/** What GET /status shows of the disk (Storage.Disk). */
export interface DiskStatus {
  /** Low: less free than the reserve: whatever takes the space, the disk is filling. */
  State: 'Ok' | 'Low' | 'Unknown';
  FreeBytes: number | null;
  SizeBytes: number | null;
  LowBelowBytes: number | null;
}

/** What GET /status shows of the history's bounds (Storage.History). */
export interface HistoryStorageStatus {
  FilesBytes: number;
  DatabaseBytes: number;
  WalBytes: number;
  TrafficLogBytes: number;
  UsedDatabaseBytes: number;
  BoundBytes: number | null;
  BoundBy: BoundLook['boundBy'];
  Rows: number;
  OldestAt: string | null;
  RetentionDays: number;
  BytesPerDay: number | null;
  DaysFit: number | null;
  RetentionMet: boolean | null;
  SizeCutsFrom: string | null;
  Cuts: number;
  CutRows: number;
  LastCut: HistoryCut | null;
  MeasuredAt: string;
}

const mb = (bytes: number | null) => (bytes === null ? '?' : `${(bytes / 1048576).toFixed(1)} MB`);
const days = (d: number) => (d >= 10 ? d.toFixed(0) : d >= 0.1 ? d.toFixed(1) : d.toPrecision(2));

/**
 * Keeps the last look at the disk and says once what changes: the age bound that cannot be met
 * (and met again), the disk Low (and Ok again), and each cut of the history.
 */
export class StorageWatch {
  private last: StorageLook | null = null;
  private cuts = 0;
  private cutRows = 0;
  private lastCut: HistoryCut | null = null;
  private ageUnmet = false;
  private low = false;
  private noRoom = false;

  constructor(
    private readonly settings: BoundSettings,
    private readonly measure: () => StorageMeasure,
    /** The time before which about `share` of the history lies (db/history-store.ts, timeAtShare). */
    private readonly timeAtShare: (share: number) => string | null,
    private readonly clock: () => Date,
    private readonly log: Logger,
    /** The WAL holds its restart size or more (db/history-bound.ts, walLimitsFor). */
    private readonly walPastRestart_: () => boolean = () => false,
  ) {}

  /** The WAL file holds its restart size or more: a purge asks it to start over before its next chunk. */
  walPastRestart(): boolean {
    return this.walPastRestart_();
  }

  /** Measure the disk now: the bound, the projection, the Low state, and the cutoff to purge to if the size bound is passed. */
  look(): StorageLook {
    const at = this.clock();
    const measure = this.measure();
    // What the pages in use grew by since the last look (0 after a cut): as much again before the next.
    const ahead = this.last ? Math.max(0, measure.usedDatabaseBytes - this.last.measure.usedDatabaseBytes) : 0;
    const bound = lookAtBound(this.settings, measure, ahead);
    // The rate last measured stands in while a cut has left too short a history to measure it (not once the history is empty).
    const lastRate = measure.history.rows > 0 ? (this.last?.projection?.bytesPerDay ?? null) : null;
    const projection = project(this.settings, measure, bound, at, lastRate);
    const cutoff = bound.cutShare > 0 ? this.timeAtShare(bound.cutShare) : null;
    this.last = { at, measure, bound, projection, cutoff };
    this.tellChanges(this.last);
    return this.last;
  }

  /** A cut made for the size bound: counted, logged, and the disk looked at again. */
  cut(done: { purged: number; chunks: number; ms: number }, cutoff: string, before: StorageLook): void {
    this.cuts += 1;
    this.cutRows += done.purged;
    this.lastCut = { At: this.clock().toISOString(), Rows: done.purged, Cutoff: cutoff, Chunks: done.chunks, Ms: done.ms };
    const b = before.bound;
    this.log.info(
      {
        historyCut: this.lastCut,
        usedDatabaseBytes: before.measure.usedDatabaseBytes,
        databaseBudgetBytes: b.databaseBudgetBytes,
        boundBytes: b.boundBytes,
        boundBy: b.boundBy,
      },
      `history: purged ${done.purged} rows delivered before ${cutoff} to stay within the size bound (the database's pages in use ${mb(before.measure.usedDatabaseBytes)} of ${mb(b.databaseBudgetBytes)} it may take; ${b.boundBy} ${mb(b.boundBytes)} for the database, its WAL and the traffic log)`,
    );
    this.look();
  }

  /** One line with the projection: at start and hourly. */
  logProjection(when: 'start' | 'hourly'): void {
    const l = this.last ?? this.look();
    const p = l.projection;
    const fields = { when, history: this.status(), disk: this.diskStatus() };
    if (!p)
      this.log.info(
        fields,
        `history: ${mb(l.measure.usedDatabaseBytes)} in the database, ${mb(l.bound.filesBytes)} with its WAL and the traffic log, bound ${mb(l.bound.boundBytes)} (${l.bound.boundBy}); too little history yet to project the days that fit`,
      );
    else
      this.log.info(
        fields,
        `history: ${days(p.daysFit)} days fit in the size bound at the current rate (${mb(p.bytesPerDay)} a day; bound ${mb(l.bound.boundBytes)} by ${l.bound.boundBy}); HistoryRetentionDays ${this.settings.retentionDays} ${p.retentionMet ? 'is met' : `cannot be met: the size bound cuts the history from ${p.sizeCutsFrom}`}`,
      );
  }

  /** The last look's Storage.History for GET /status. */
  status(): HistoryStorageStatus {
    const l = this.last ?? this.look();
    const m = l.measure;
    return {
      FilesBytes: l.bound.filesBytes,
      DatabaseBytes: m.databaseBytes,
      WalBytes: m.walBytes,
      TrafficLogBytes: m.trafficLogBytes,
      UsedDatabaseBytes: m.usedDatabaseBytes,
      BoundBytes: l.bound.boundBytes,
      BoundBy: l.bound.boundBy,
      Rows: m.history.rows,
      OldestAt: m.history.oldestAt,
      RetentionDays: this.settings.retentionDays,
      BytesPerDay: l.projection?.bytesPerDay ?? null,
      DaysFit: l.projection?.daysFit ?? null,
      RetentionMet: l.projection?.retentionMet ?? null,
      SizeCutsFrom: l.projection?.sizeCutsFrom ?? null,
      Cuts: this.cuts,
      CutRows: this.cutRows,
      LastCut: this.lastCut,
      MeasuredAt: l.at.toISOString(),
    };
  }

  /** The last look's Storage.Disk for GET /status. */
  diskStatus(): DiskStatus {
    const l = this.last ?? this.look();
    return {
      State: l.measure.freeBytes === null ? 'Unknown' : l.bound.diskLow ? 'Low' : 'Ok',
      FreeBytes: l.measure.freeBytes,
      SizeBytes: l.measure.fileSystemBytes,
      LowBelowBytes: l.bound.lowBelowBytes,
    };
  }

  /** One line when the age bound stops being met (or is met again), when the disk turns Low (or Ok again), and when the bound leaves the history nothing. */
  private tellChanges(l: StorageLook): void {
    // (A disk that other files fill is told as Low below, not here.)
    const noRoom = l.bound.databaseBudgetBytes === 0 && l.bound.boundBy !== 'HistoryKeepFreeShare';
    if (noRoom && !this.noRoom)
      this.log.error(
        {
          boundBytes: l.bound.boundBytes,
          boundBy: l.bound.boundBy,
          walAllowanceBytes: this.settings.walAllowanceBytes,
          trafficLogMaxBytes: this.settings.trafficLogMaxBytes,
        },
        `history: the size bound (${mb(l.bound.boundBytes)} by ${l.bound.boundBy}) leaves the database nothing beside the WAL (${mb(this.settings.walAllowanceBytes)}) and the traffic log (${mb(this.settings.trafficLogMaxBytes)} at its most): no history is kept. Raise HistoryMaxBytes, or lower Sorter.TrafficLogMaxBytes or Sorter.TrafficLogFiles`,
      );
    this.noRoom = noRoom;
    const p = l.projection;
    if (p && p.retentionMet === this.ageUnmet) {
      this.ageUnmet = !p.retentionMet;
      if (this.ageUnmet)
        this.log.warn(
          {
            daysFit: p.daysFit,
            retentionDays: this.settings.retentionDays,
            bytesPerDay: p.bytesPerDay,
            boundBytes: l.bound.boundBytes,
            boundBy: l.bound.boundBy,
            sizeCutsFrom: p.sizeCutsFrom,
          },
          `history: HistoryRetentionDays ${this.settings.retentionDays} cannot be met: at the current rate (${mb(p.bytesPerDay)} a day) only ${days(p.daysFit)} days fit in the size bound (${mb(l.bound.boundBytes)} by ${l.bound.boundBy}), which cuts the oldest history from ${p.sizeCutsFrom} (docs/operations.md, "Sizing the card")`,
        );
      else
        this.log.info(
          { daysFit: p.daysFit, retentionDays: this.settings.retentionDays },
          `history: HistoryRetentionDays ${this.settings.retentionDays} is met again (${days(p.daysFit)} days fit at the current rate)`,
        );
    }
    if (l.bound.diskLow !== this.low) {
      this.low = l.bound.diskLow;
      const fields = {
        disk: l.bound.diskLow ? 'Low' : 'Ok',
        freeBytes: l.measure.freeBytes,
        lowBelowBytes: l.bound.lowBelowBytes,
        filesBytes: l.bound.filesBytes,
      };
      if (this.low)
        this.log.error(
          fields,
          `disk low: ${mb(l.measure.freeBytes)} free on the database's file system, below ${mb(l.bound.lowBelowBytes)} (HistoryKeepFreeShare): the history is cut so that the database does not grow, but something else is filling the disk, or the bound leaves too little free; see GET /status, Storage.Disk`,
        );
      else this.log.info(fields, `disk Ok again: ${mb(l.measure.freeBytes)} free`);
    }
  }
}
