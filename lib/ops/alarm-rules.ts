// The alarms the service raises: each a stable code, a severity, the condition that raises it, and
// the runbook's line of what to do (docs/operations.md, "Alarms", says the same at more length).
import type { AlarmEntry, AlarmSeverity } from '../../db/alarm-store';
import type { AlarmSettings, Config } from '../process/config';

/** The alarms' thresholds, and when a decision is late (LateDecisionMs, shared with the dashboard's charts). */
export type RuleSettings = AlarmSettings & Pick<Config, 'LateDecisionMs'>;
import type { QueueName } from '../../model/messages';

/** What the alarm conditions look at, gathered once per evaluation (lib/ops/alarms.ts). Times in ms since the epoch. */
export interface AlarmObservations {
  now: number;
  testMode: boolean;
  /** `lost`: connections that were up and dropped, since the start. */
  link: { connected: boolean; since: number; lost: number };
  /** When the link was lost in the last ten minutes (LINK_DROP_WINDOW_MS), oldest first; kept by the monitor. */
  linkDropsAt: readonly number[];
  /** The last REQUEST, VERIFY or SCAN from the sorter (or the start). */
  lastSorterMessageAt: number;
  /** Seconds since a GET last reached each queue (0 while one waits). */
  pollAgeSeconds: Record<QueueName, number>;
  /** The last time a REQUEST passed LateDecisionMs without its assignment, and how many did in the last evaluation. */
  lateDecisionAt: number | null;
  lateDecisions: number;
  oldestAgeSeconds: Record<QueueName, number | null>;
  outboxOldestAgeSeconds: number | null;
  deadLetters: Record<QueueName, number>;
  /** `lastFailure`: the last transaction that failed, even once commits succeed again. */
  storage: {
    state: 'Ok' | 'Stalled' | 'Failing';
    since: number;
    waitingFor: string | null;
    lastError: string | null;
    lastFailure: { at: number; error: string } | null;
  };
  freeDiskBytes: number | null;
  /** The run before did not stop cleanly, and nobody has acknowledged that yet. */
  uncleanStart: boolean;
}

/** One alarm: its code, severity, the line of what to do, and its condition (a sentence while it holds, else null). */
export interface AlarmRule {
  code: string;
  severity: AlarmSeverity;
  whatToDo: string;
  /** Cleared by its acknowledgement (an event, not a state that passes by itself). */
  clearsOnAck?: boolean;
  check(o: AlarmObservations, s: RuleSettings): string | null;
}

const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
/** An event at `at` is recent enough to hold its alarm: less than ClearAfterSeconds ago. */
const held = (o: AlarmObservations, s: RuleSettings, at: number | null) =>
  at !== null && o.now - at < Math.max(s.ClearAfterSeconds * 1000, 1);
/** A threshold that is on (not 0) and exceeded. */
const over = (value: number | null, threshold: number) => threshold > 0 && value !== null && value >= threshold;

const pollRule = (queue: QueueName, severity: AlarmSeverity): AlarmRule => ({
  code: `WCS_NOT_POLLING_${queue.toUpperCase()}`,
  severity,
  whatToDo: `The WCS has stopped asking GET /${queue}: check the WCS's interface job and the network between it and this service; the access log (AccessLog "all") shows who polls.`,
  check: (o, s) =>
    over(o.pollAgeSeconds[queue], s.WcsPollSeconds) ? `no GET /${queue} for ${Math.round(o.pollAgeSeconds[queue])} s` : null,
});

const ageRule = (queue: QueueName, severity: AlarmSeverity): AlarmRule => ({
  code: `QUEUE_OLD_${queue.toUpperCase()}`,
  severity,
  whatToDo: `Messages wait in the ${queue} queue: is the WCS polling (WCS_NOT_POLLING_${queue.toUpperCase()}) and taking them as fast as they come? GET /status shows the depth and the waiting clients.`,
  check: (o, s) =>
    !o.testMode && over(o.oldestAgeSeconds[queue], s.QueueAgeSeconds)
      ? `the oldest message in the ${queue} queue is ${Math.round(o.oldestAgeSeconds[queue] ?? 0)} s old`
      : null,
});

/** How far back SORTER_LINK_UNSTABLE counts the link's drops (ms). */
export const LINK_DROP_WINDOW_MS = 10 * 60_000;

/** Every alarm, in the order the dashboard lists them when several are raised together. */
export const ALARM_RULES: readonly AlarmRule[] = [
  {
    code: 'STORAGE_FAILING',
    severity: 'critical',
    whatToDo:
      'Writes to the queue database fail: read Storage.LastError (or LastFailure, when some commits go through) in GET /status and the log; free the disk, fix the file\'s permissions, or restore the file (docs/operations.md, "Backup while it runs").',
    // Held ClearAfterSeconds past the last failure: on a nearly full disk a small commit may go
    // through between failed ones and turn the state Ok until the next, so that a look at the
    // state alone may miss them, or raise and clear at every look.
    check: (o, s) => {
      if (o.storage.state === 'Failing') return `the storage is failing: ${o.storage.lastError ?? 'unknown error'}`;
      const last = o.storage.lastFailure;
      return last && held(o, s, last.at)
        ? `a transaction failed ${secs(o.now - last.at)} ago (${last.error}); some commits go through between failures`
        : null;
    },
  },
  {
    code: 'STORAGE_STALLED',
    severity: 'critical',
    whatToDo:
      "Commits are held up: if WaitingFor is Lock, end the other process holding the database (an operator's sqlite3 in a transaction, a backup); if Disk, check the disk's health and load.",
    check: (o, s) =>
      o.storage.state === 'Stalled' && over(o.now - o.storage.since, s.StorageStalledSeconds * 1000)
        ? `commits held up for ${secs(o.now - o.storage.since)}, waiting for the ${(o.storage.waitingFor ?? 'disk').toLowerCase()}`
        : null,
  },
  {
    code: 'DISK_NEARLY_FULL',
    severity: 'major',
    whatToDo:
      "Free space on the database's file system: remove old files, rotated traffic logs or backups there, or shorten HistoryRetentionDays; the service stops taking messages when the disk is full.",
    check: (o, s) =>
      s.MinFreeDiskBytes > 0 && o.freeDiskBytes !== null && o.freeDiskBytes < s.MinFreeDiskBytes
        ? `${mb(o.freeDiskBytes)} free on the database's disk, below ${mb(s.MinFreeDiskBytes)}`
        : null,
  },
  {
    code: 'SORTER_LINK_DOWN',
    severity: 'critical',
    whatToDo:
      "The sorter's PLC is not connected: check that it is powered and running, the cable and switch, and Sorter.Host and Sorter.Port; the log says whether connecting is refused or times out.",
    check: (o, s) =>
      !o.testMode && !o.link.connected && over(o.now - o.link.since, s.LinkDownSeconds * 1000)
        ? `the sorter has been disconnected for ${secs(o.now - o.link.since)}`
        : null,
  },
  {
    code: 'SORTER_LINK_UNSTABLE',
    severity: 'major',
    whatToDo:
      "The link to the sorter keeps dropping and coming back: check the cable, the switch and its port (errors, duplex), and whether another host connects to the PLC's port; the log's 'sorter link lost' lines and GET /status Sorter.ConnectionsLost show each drop.",
    // A drop that comes back within LinkDownSeconds raises nothing else; unacknowledged telegrams are
    // sent again after each, so items decided meanwhile may go round.
    check: (o, s) => {
      const drops = o.linkDropsAt;
      return !o.testMode && over(drops.length, s.LinkDropsInTenMinutes)
        ? `the sorter link was lost ${drops.length} times in the last 10 minutes, the last ${secs(o.now - (drops.at(-1) ?? o.now))} ago`
        : null;
    },
  },
  {
    code: 'SORTER_SILENT',
    severity: 'warning',
    whatToDo:
      'The link is up but the sorter sends no items: is the sorter stopped, in manual mode or on a break? If it runs, check its induction and scanners.',
    check: (o, s) => {
      const since = Math.max(o.lastSorterMessageAt, o.link.since);
      return !o.testMode && o.link.connected && over(o.now - since, s.SorterSilentSeconds * 1000)
        ? `connected, but no REQUEST, VERIFY or SCAN for ${secs(o.now - since)}`
        : null;
    },
  },
  pollRule('sortation', 'critical'),
  pollRule('destination', 'major'),
  {
    code: 'DECISIONS_LATE',
    severity: 'major',
    whatToDo:
      "REQUESTs went unanswered past LateDecisionMs, so items go round or to the reject chute: check that the WCS polls and posts its assignments promptly (GET /status DecisionLatency, the dashboard's decision chart).",
    check: (o, s) =>
      !o.testMode && s.LateDecisionMs > 0 && held(o, s, o.lateDecisionAt)
        ? `REQUESTs without an assignment ${s.LateDecisionMs} ms after they arrived (${o.lateDecisions} in the last look)`
        : null,
  },
  ageRule('sortation', 'major'),
  ageRule('destination', 'warning'),
  {
    code: 'OUTBOX_UNACKNOWLEDGED',
    severity: 'major',
    whatToDo:
      "Assignments wait for the sorter's acknowledgement: see SORTER_LINK_DOWN, and the log for NAKs or refused telegrams; entries older than Sorter.AssignmentTtlSeconds are dropped.",
    check: (o, s) =>
      !o.testMode && over(o.outboxOldestAgeSeconds, s.OutboxAgeSeconds)
        ? `an outbox entry has waited ${Math.round(o.outboxOldestAgeSeconds ?? 0)} s for the sorter's acknowledgement`
        : null,
  },
  {
    code: 'DEAD_LETTERS',
    severity: 'warning',
    whatToDo:
      'A client keeps taking messages without proving its read: fix the client (docs/queue-semantics.md, "Dead letters"), then send them back with POST /dead-letters/requeue.',
    check: (o) => {
      const n = o.deadLetters.sortation + o.deadLetters.destination;
      return n > 0 ? `${n} dead letters (${o.deadLetters.sortation} sortation, ${o.deadLetters.destination} destination)` : null;
    },
  },
  {
    code: 'RESTART_AFTER_CRASH',
    severity: 'warning',
    whatToDo:
      'The service did not stop cleanly last time (a crash, kill -9, a power cut): read the log before the restart for why; messages may have been handed out twice (marked). Acknowledging clears it.',
    clearsOnAck: true,
    check: (o) => (o.uncleanStart ? 'the run before this one did not stop cleanly' : null),
  },
];

/** The rule of a code, or undefined (a code an older or newer version raised). */
export const ruleOf = (code: string) => ALARM_RULES.find((r) => r.code === code);

/** An alarm with its runbook line, as /status and the alarm routes show it. */
export const withWhatToDo = (a: AlarmEntry) => ({
  ...a,
  WhatToDo: ruleOf(a.Code)?.whatToDo ?? 'No runbook line: raised by another version of the service.',
});
