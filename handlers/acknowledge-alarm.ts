// POST /alarms/{id}/ack: an operator saw an alarm; who and when go to the journal and the log.
import { type HandlerResult, httpFunction, ok } from '../lib/functions/define';
import { errorDto, unauthorized } from '../lib/http/routes';
import { alarmAckDto, alarmParams } from '../lib/http/alarm-schemas';
import type { AlarmMonitor } from '../lib/ops/alarms';
import { withWhatToDo } from '../lib/ops/alarm-rules';

/** What the acknowledgement needs: the monitor. */
export interface AcknowledgeAlarmDeps {
  alarms: Pick<AlarmMonitor, 'acknowledge'>;
}

/** Which alarm, and who: the API key's name, else the client's address. */
export interface AcknowledgeAlarmEvent {
  id: number;
  caller: string | null;
  clientAddress: string | null;
}

/** Record who acknowledged alarm `id`; the first acknowledgement stands. 404 for an id the journal does not hold. */
export function acknowledgeAlarm(deps: AcknowledgeAlarmDeps, event: AcknowledgeAlarmEvent): HandlerResult {
  const by = event.caller ?? `address ${event.clientAddress ?? 'unknown'}`;
  const alarm = deps.alarms.acknowledge(event.id, by);
  if (!alarm)
    return ok(
      {
        statusCode: 404,
        error: 'Not Found',
        message: `no alarm ${event.id} in the journal (never raised, or purged after HistoryRetentionDays)`,
      },
      404,
    );
  return ok({ Alarm: withWhatToDo(alarm) });
}

export const fn = httpFunction(acknowledgeAlarm, {
  params: alarmParams,
  notes: [
    "Records who acknowledged the alarm (the name of the API key, never the key; without ApiKeys the client's address) and when, in the journal and in the log. An alarm already acknowledged keeps its first acknowledgement. RESTART_AFTER_CRASH clears when acknowledged; the others clear when their condition passes.",
    'The acknowledgement is kept in memory at once and written to the journal as soon as the storage takes it (a stalled storage is one of the alarms).',
  ],
  responses: () => ({
    200: { description: 'The alarm as it stands now', schema: alarmAckDto },
    404: {
      description: 'No such alarm',
      schema: errorDto(
        'AlarmNotFoundError',
        404,
        'Not Found',
        'no alarm 12 in the journal (never raised, or purged after HistoryRetentionDays)',
      ),
    },
    401: unauthorized,
  }),
  event: (request) => ({ id: Number(request.params.id), caller: request.caller ?? null, clientAddress: request.clientAddress }),
});
