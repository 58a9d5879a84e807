// The alarm monitor: looks at the alarm conditions (lib/ops/alarm-rules.ts) every EvaluateSeconds,
// raises and clears alarms, logs each raise and clear once, keeps them in the alarm journal
// through the writer thread, and takes operators' acknowledgements.
import './metrics-footprint'; // before prom-client: see the module
import client from 'prom-client';
import type { AlarmEntry, AlarmReads, AlarmWrites } from '../../db/alarm-store';
import type { QueueName } from '../../model/messages';
import type { RuleSettings } from './alarm-rules';
import type { Logger } from '../process/logger';
import { ALARM_RULES, type AlarmObservations, LINK_DROP_WINDOW_MS, ruleOf } from './alarm-rules';
import { PREFIX } from './metrics';
import { everyBeat } from '../host/beat';

/** The journal as the monitor uses it: reads, and writes that resolve once committed. */
export type AlarmJournal = Pick<AlarmReads, 'highestAlarmId' | 'openAlarms' | 'alarmJournal' | 'alarm'> & {
  [K in keyof AlarmWrites]: (...args: Parameters<AlarmWrites[K]>) => Promise<ReturnType<AlarmWrites[K]>>;
};

/** What the monitor needs: its settings, the journal, what it observes, a clock and the log. */
export interface AlarmMonitorOptions {
  settings: RuleSettings;
  journal: AlarmJournal;
  /** The observations the monitor does not keep itself (read from the running service). */
  observe(now: number): Omit<
    AlarmObservations,
    'now' | 'lastSorterMessageAt' | 'pollAgeSeconds' | 'lateDecisionAt' | 'lateDecisions' | 'uncleanStart' | 'linkDropsAt'
  > & {
    waitingClients: Record<QueueName, number>;
    lateDecisions: number;
  };
  /** The run before did not stop cleanly (lib/process/instance-lock.ts). */
  uncleanStart: boolean;
  clock: () => Date;
  /**
   * A clock that never steps (ms; lib/link/sorter-link.ts, steadyWallMs). With it, the monitor
   * keeps its own event times on it (ownNow), and a step of `clock` between two looks is logged.
   */
  steadyMs?: () => number;
  log: Logger;
}

/** A difference between the wall clock and the steady one, from one look to the next, that counts as the system clock being set (ms). */
const CLOCK_STEP_MS = 1000;

/** An acknowledgement's outcome: the alarm as it stands now, or null for an id the journal never gave. */
export type Acknowledged = AlarmEntry | null;

/** Raises and clears alarms from the conditions, keeps them in memory and in the journal. */
export class AlarmMonitor {
  private readonly active = new Map<string, AlarmEntry>();
  private nextId: number;
  private stopBeat: (() => void) | null = null;
  private lastSorterMessageAt: number;
  private readonly lastPollAt: Record<QueueName, number>;
  private lateDecisionAt: number | null = null;
  /** When the link was seen lost (by its count going up between two looks), the last ten minutes' worth. */
  private linkDropsAt: number[] = [];
  /** The link's lost connections at the last look (null before the first). */
  private linkLost: number | null = null;
  private uncleanStart: boolean;
  /** Alarms raised, cleared or acknowledged lately, as they stand in memory (their rows may lag behind). */
  private readonly changed = new Map<number, AlarmEntry>();
  /** Alarms whose journal writes were refused, by id, to be written again. */
  private readonly unwritten = new Map<number, AlarmEntry>();
  private rewriting: Promise<void> | null = null;

  constructor(private readonly options: AlarmMonitorOptions) {
    const now = options.clock().getTime();
    const own = this.ownNow();
    this.lastSorterMessageAt = own;
    this.lastPollAt = { sortation: own, destination: own };
    this.uncleanStart = options.uncleanStart;
    this.nextId = options.journal.highestAlarmId() + 1;
    // Alarms the run before left active stay so until a look finds their condition gone.
    for (const a of options.journal.openAlarms()) {
      const older = this.active.get(a.Code);
      if (older) this.clear(older, now);
      this.active.set(a.Code, a);
      this.remember(a);
    }
  }

  /**
   * Look once now, then at each multiple of EvaluateSeconds of the clock (a timer that does not
   * keep the process alive): with the other periodic work of an idle service (lib/host/beat.ts).
   */
  start(): this {
    this.look();
    this.stopBeat = everyBeat(this.options.settings.EvaluateSeconds * 1000, () => this.look());
    return this;
  }

  stop(): void {
    this.stopBeat?.();
    this.stopBeat = null;
  }

  /** A GET reached `queue` (handlers/dequeue.ts). */
  polled(queue: QueueName): void {
    this.lastPollAt[queue] = this.ownNow();
  }

  /** A REQUEST, VERIFY or SCAN came from the sorter (handlers/sorter-message.ts). */
  sorterMessage(): void {
    this.lastSorterMessageAt = this.ownNow();
  }

  /** The active alarms, oldest first. */
  list(): AlarmEntry[] {
    return [...this.active.values()].sort((a, b) => a.Id - b.Id);
  }

  /** The journal since `since` (ISO time), newest first, with the active alarms as they stand in memory (their rows may not be written yet). */
  journal(since: string, limit = 500): AlarmEntry[] {
    const rows = new Map(this.options.journal.alarmJournal(since, limit).map((a) => [a.Id, a]));
    for (const a of this.changed.values()) if (rows.has(a.Id) || a.RaisedAt >= since) rows.set(a.Id, a);
    return [...rows.values()].sort((a, b) => b.Id - a.Id).slice(0, limit);
  }

  /** Delete alarms cleared before `cutoff` from the journal (housekeeping, with the history); returns how many. */
  async purgeClearedBefore(cutoff: string): Promise<number> {
    let purged = 0;
    // A few rows a day: one short transaction at a time all the same.
    for (let n = -1; n !== 0; purged += n) n = await this.options.journal.purgeAlarmsBefore(cutoff, 1000);
    return purged;
  }

  /** A look from the timer: whatever fails in it (a read the database refuses) is logged, at most once a minute, and the next look tries again. */
  private look(): void {
    try {
      this.evaluate();
    } catch (err) {
      const now = Date.now();
      if (now - this.lastLookError >= 60_000)
        this.options.log.error(
          { err },
          `alarms: a look at the conditions failed (${(err as Error).message}); trying again every ${this.options.settings.EvaluateSeconds} s`,
        );
      this.lastLookError = now;
    }
  }

  private lastLookError = 0;

  /** Look at every condition once: raise what holds and is not raised, clear what is raised and no longer holds. */
  evaluate(): void {
    this.noticeClockStep();
    const o = this.observations();
    for (const rule of ALARM_RULES) {
      const detail = rule.check(o, this.options.settings);
      const raised = this.active.get(rule.code);
      if (detail !== null && !raised) this.raise(rule.code, rule.severity, detail, o.now);
      else if (detail === null && raised) this.clear(raised, o.now);
    }
    // Codes no rule knows (left by another version): nothing will hold them up.
    for (const a of this.active.values()) if (!ruleOf(a.Code)) this.clear(a, o.now);
    this.rewrite();
  }

  /**
   * An operator saw alarm `id`: who (the API key's name, or the client's address) and when,
   * in memory at once and in the journal when the storage takes it. The first acknowledgement
   * stands. An alarm that clears on acknowledgement (RESTART_AFTER_CRASH) clears.
   */
  acknowledge(id: number, by: string): Acknowledged {
    const at = this.options.clock().toISOString();
    const active = [...this.active.values()].find((a) => a.Id === id);
    const entry = active ?? this.options.journal.alarm(id);
    if (!entry) return null;
    if (entry.AcknowledgedAt === null) {
      entry.AcknowledgedAt = at;
      entry.AcknowledgedBy = by;
      this.remember(entry);
      this.write('acknowledgeAlarm', entry, this.options.journal.acknowledgeAlarm(id, by, at));
      this.options.log.info({ alarm: entry.Code, id, by }, `alarm ${entry.Code} (#${id}) acknowledged by ${by}`);
    }
    if (active && ruleOf(active.Code)?.clearsOnAck) {
      if (active.Code === 'RESTART_AFTER_CRASH') this.uncleanStart = false;
      this.clear(active, Date.parse(at));
    }
    return entry;
  }

  /**
   * The times the monitor keeps itself (the last poll and sorter message, the last late decision,
   * the link's drops) are on the clock that never steps when there is one: a step of the system
   * clock (NTP on a box that started without a battery-backed one: hours or months at once)
   * neither raises SORTER_SILENT or WCS_NOT_POLLING at once nor holds DECISIONS_LATE until the
   * clock has caught up. The link's and the storage's times keep their age too, and so do the ages
   * of the messages and outbox entries queued in this run (lib/queue/arrivals.ts); those queued
   * before the start count from their stored times (docs/operations.md, "The system clock").
   */
  private ownNow(): number {
    return this.options.steadyMs?.() ?? this.options.clock().getTime();
  }

  private clockSeen: { wall: number; steady: number } | null = null;

  /** The system clock set since the last look: said in the log, once a step. */
  private noticeClockStep(): void {
    const { steadyMs } = this.options;
    if (!steadyMs) return;
    const now = { wall: this.options.clock().getTime(), steady: steadyMs() };
    const seen = this.clockSeen;
    this.clockSeen = now;
    if (!seen) return;
    const step = now.wall - seen.wall - (now.steady - seen.steady);
    if (Math.abs(step) < CLOCK_STEP_MS) return;
    this.options.log.warn(
      { stepMs: Math.round(step) },
      `the system clock was set ${step > 0 ? 'forward' : 'back'} by ${Math.round(Math.abs(step) / 1000)} s; times stored from now on follow it; the ages of messages and outbox entries queued before this start count from their stored times`,
    );
  }

  private observations(): AlarmObservations {
    const now = this.options.clock().getTime();
    const own = this.ownNow();
    /** One of the monitor's own times on the wall clock, its age kept (the same time without a steady clock). */
    const wallOf = (t: number) => now - (own - t);
    const { waitingClients, lateDecisions, ...seen } = this.options.observe(now);
    if (lateDecisions > 0) this.lateDecisionAt = own;
    this.countLinkDrops(seen.link.lost, own);
    const pollAge = (q: QueueName) => (waitingClients[q] > 0 ? 0 : (own - this.lastPollAt[q]) / 1000);
    return {
      ...seen,
      now,
      lastSorterMessageAt: wallOf(this.lastSorterMessageAt),
      pollAgeSeconds: { sortation: pollAge('sortation'), destination: pollAge('destination') },
      lateDecisionAt: this.lateDecisionAt === null ? null : wallOf(this.lateDecisionAt),
      lateDecisions,
      uncleanStart: this.uncleanStart,
      linkDropsAt: this.linkDropsAt.map(wallOf),
    };
  }

  /** Each connection lost since the last look counts as a drop at this look; drops older than ten minutes are forgotten. */
  private countLinkDrops(lost: number, now: number): void {
    for (let n = this.linkLost === null ? 0 : lost - this.linkLost; n > 0; n--) this.linkDropsAt.push(now);
    this.linkLost = lost;
    this.linkDropsAt = this.linkDropsAt.filter((at) => now - at < LINK_DROP_WINDOW_MS);
  }

  private raise(code: string, severity: AlarmEntry['Severity'], detail: string, now: number): void {
    const entry: AlarmEntry = {
      Id: this.nextId++,
      Code: code,
      Severity: severity,
      Detail: detail,
      RaisedAt: new Date(now).toISOString(),
      ClearedAt: null,
      AcknowledgedAt: null,
      AcknowledgedBy: null,
    };
    this.active.set(code, entry);
    this.remember(entry);
    const whatToDo = ruleOf(code)?.whatToDo ?? '';
    this.options.log[severity === 'warning' ? 'warn' : 'error'](
      { alarm: code, severity, id: entry.Id, detail },
      `alarm raised: ${code} (${severity}): ${detail}. What to do: ${whatToDo}`,
    );
    this.write('raiseAlarm', entry, this.options.journal.raiseAlarm({ id: entry.Id, code, severity, detail, raisedAt: entry.RaisedAt }));
  }

  private clear(entry: AlarmEntry, now: number): void {
    this.active.delete(entry.Code);
    entry.ClearedAt = new Date(now).toISOString();
    this.remember(entry);
    this.options.log.info(
      { alarm: entry.Code, severity: entry.Severity, id: entry.Id, raisedAt: entry.RaisedAt },
      `alarm cleared: ${entry.Code} after ${Math.round((now - Date.parse(entry.RaisedAt)) / 1000)} s`,
    );
    this.write('clearAlarm', entry, this.options.journal.clearAlarm(entry.Id, entry.ClearedAt));
  }

  /** Keep `entry` as it stands in memory for the journal's readers, the latest 200. */
  private remember(entry: AlarmEntry): void {
    this.changed.delete(entry.Id);
    this.changed.set(entry.Id, entry);
    const oldest = this.changed.keys().next();
    if (this.changed.size > 200 && !oldest.done) this.changed.delete(oldest.value);
  }

  /**
   * A journal write. In memory the alarm stands whatever becomes of it (the storage may be what it
   * is about); a write refused (a failing storage, a full disk) is tried again at the next looks,
   * the whole row at once, until one is written.
   */
  private write(op: string, entry: AlarmEntry, written: Promise<unknown>): void {
    written.catch((err: Error) => {
      if (!this.unwritten.has(entry.Id))
        this.options.log.warn(
          { err, op, alarm: entry.Code, id: entry.Id },
          `alarm journal: ${op} of ${entry.Code} not written (${err.message}); the alarm stands in memory, /status and /metrics, and its row is written once the storage takes it`,
        );
      this.unwritten.set(entry.Id, entry);
    });
  }

  /** Write again the rows whose writes were refused: each step is idempotent (the insert is ignored if the row exists, the clear and the acknowledgement keep the first). One attempt at a time. */
  private rewrite(): void {
    if (this.rewriting || this.unwritten.size === 0) return;
    const entries = [...this.unwritten.values()];
    const j = this.options.journal;
    this.rewriting = (async () => {
      for (const e of entries) {
        await j.raiseAlarm({ id: e.Id, code: e.Code, severity: e.Severity, detail: e.Detail, raisedAt: e.RaisedAt });
        if (e.ClearedAt) await j.clearAlarm(e.Id, e.ClearedAt);
        if (e.AcknowledgedAt && e.AcknowledgedBy) await j.acknowledgeAlarm(e.Id, e.AcknowledgedBy, e.AcknowledgedAt);
        this.unwritten.delete(e.Id);
      }
    })()
      .catch(() => {}) // still refused: the next look tries again
      .finally(() => (this.rewriting = null));
  }
}

/** The metric of the active alarms: one series per active alarm, 1, labelled by code and severity. */
export function alarmGauge(registry: client.Registry, monitor: Pick<AlarmMonitor, 'list'>): void {
  new client.Gauge({
    name: `${PREFIX}alarm_active`,
    help: 'One series per active alarm (value 1), labelled by its code and severity (docs/operations.md, "Alarms"); absent when none is active',
    labelNames: ['code', 'severity'],
    registers: [registry],
    collect() {
      this.reset();
      for (const a of monitor.list()) this.set({ code: a.Code, severity: a.Severity }, 1);
    },
  });
}
