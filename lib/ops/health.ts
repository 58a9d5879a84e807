// Health checks for a watchdog or a load balancer: is the process alive, is the service ready to
// do its job (database writable, schema applied, sorter link up in live mode). The body follows
// the shape of the IETF health-check draft (application/health+json): a status and named checks.
import { type StorageStatus, failedRecently } from '../../db/storage-status';
import type { SorterLinkStatus } from '../link/sorter-link-status';

/** pass: fine; warn: working but slower or degraded; fail: not doing its job. */
export type HealthStatus = 'pass' | 'warn' | 'fail';

/** One check: what was observed and, when not pass, why. */
export interface Check {
  status: HealthStatus;
  observedValue: string | number | boolean | null;
  observedUnit?: string;
  output?: string;
  time: string;
}

/** A health report: the worst status of its checks, and the checks by name. */
export interface HealthReport {
  status: HealthStatus;
  checks: Record<string, [Check]>;
}

/** What the checks look at. */
export interface HealthInputs {
  testMode: boolean;
  now: Date;
  storage: StorageStatus;
  schema: { applied: number; known: number };
  link: SorterLinkStatus;
  eventLoop: { delayP99Ms(): number };
}

const worst = (checks: Check[]): HealthStatus =>
  checks.some((c) => c.status === 'fail') ? 'fail' : checks.some((c) => c.status === 'warn') ? 'warn' : 'pass';
const report = (checks: Record<string, Check>): HealthReport => ({
  status: worst(Object.values(checks)),
  checks: Object.fromEntries(Object.entries(checks).map(([k, c]) => [k, [c]])),
});

/** The event loop answers (this runs on it); a delay over 1 s since the last look is a warning. */
export function liveness(i: Pick<HealthInputs, 'now' | 'eventLoop'>): HealthReport {
  const delay = Math.round(i.eventLoop.delayP99Ms());
  return report({
    'eventLoop:delay': {
      status: delay > 1000 ? 'warn' : 'pass',
      observedValue: delay,
      observedUnit: 'ms',
      time: i.now.toISOString(),
      ...(delay > 1000 && { output: `the event loop was held up to ${delay} ms` }),
    },
  });
}

/**
 * The storage's check: fail while it fails, or until it has recovered (no failure for
 * RECOVERED_AFTER_MS: on a disk full but for a few bytes small commits go through between failed
 * ones and the state reads Ok between them); warn while a commit waits.
 */
function storageCheck(s: StorageStatus, now: Date): Check {
  const time = now.toISOString();
  if (s.ReadOnly || s.State === 'Failing')
    return { status: 'fail', observedValue: s.State, output: s.LastError ?? 'the database does not take writes', time };
  const last = s.LastFailure;
  if (last && failedRecently(Date.parse(last.At), now.getTime()))
    return {
      status: 'fail',
      observedValue: s.State,
      output: `a transaction failed at ${last.At} (${last.Error}); some commits go through between failures`,
      time,
    };
  if (s.State === 'Stalled')
    return {
      status: 'warn',
      observedValue: s.State,
      output: `a commit has waited since ${s.Since} (${s.WaitingFor === 'Lock' ? 'a lock held by another connection' : 'the disk'})`,
      time,
    };
  return { status: 'pass', observedValue: s.State, time };
}

/** Ready to do its job: the database takes writes, its schema is this version's, the sorter is connected (live mode). */
export function readiness(i: HealthInputs): HealthReport {
  const time = i.now.toISOString();
  const storage = storageCheck(i.storage, i.now);
  const schema: Check =
    i.schema.applied === i.schema.known
      ? { status: 'pass', observedValue: i.schema.applied, time }
      : {
          status: 'fail',
          observedValue: i.schema.applied,
          output: `schema version ${i.schema.applied}, this version of the service needs ${i.schema.known}`,
          time,
        };
  const link: Check = i.testMode
    ? { status: 'pass', observedValue: false, output: 'test mode: no sorter link', time }
    : i.link.Connected
      ? { status: 'pass', observedValue: true, time }
      : {
          status: 'fail',
          observedValue: false,
          output: `the sorter ${i.link.Address ?? ''} is not connected${i.link.Since ? ` (since ${i.link.Since})` : ''}`.replace('  ', ' '),
          time,
        };
  return report({ 'database:writable': storage, 'database:migrations': schema, 'sorter:link': link });
}

/** What is wrong, in one sentence each, for /status (empty when ready). */
export function problems(r: HealthReport): string[] {
  return Object.entries(r.checks)
    .filter(([, [c]]) => c.status !== 'pass')
    .map(([name, [c]]) => `${name}: ${c.output ?? c.status}`);
}
