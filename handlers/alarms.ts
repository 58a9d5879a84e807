// GET /alarms: the active alarms and the journal of the last days, each with its runbook line.
import { type HandlerResult, httpFunction, ok } from '../lib/functions/define';
import { badRequest, unauthorized } from '../lib/http/routes';
import { alarmsDto, alarmsQuery } from '../lib/http/alarm-schemas';
import { withWhatToDo } from '../lib/ops/alarm-rules';
import type { AlarmMonitor } from '../lib/ops/alarms';

/** What the alarm listing needs: the monitor and the clock. */
export interface AlarmsDeps {
  alarms: Pick<AlarmMonitor, 'list' | 'journal'>;
  clock: () => Date;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The active alarms, oldest first, and the journal of `days`, newest first. */
export function listAlarms(deps: AlarmsDeps, event: { days: number }): HandlerResult {
  const since = new Date(deps.clock().getTime() - event.days * DAY_MS).toISOString();
  return ok({ Active: deps.alarms.list().map(withWhatToDo), Journal: deps.alarms.journal(since).map(withWhatToDo) });
}

export const fn = httpFunction(listAlarms, {
  query: alarmsQuery,
  notes: [
    'Alarms are raised and cleared by the service itself, looked at every Alarms.EvaluateSeconds (docs/operations.md, "Alarms": every code, its threshold and what to do). The journal is the table alarm_journal, purged like the history after HistoryRetentionDays.',
    'POST /alarms/{id}/ack records who saw an alarm.',
  ],
  responses: () => ({
    200: { description: 'Active alarms and the journal', schema: alarmsDto },
    400: badRequest('AlarmsQueryBadRequestError', '"days" must be a number'),
    401: unauthorized,
  }),
  event: (request) => ({ days: request.query.days as number }),
});
