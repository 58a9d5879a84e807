// The joi schemas of the alarm routes (GET /alarms, POST /alarms/{id}/ack) and of /status's Alarms.
import Joi from 'joi';

/** One alarm, as /status, GET /alarms and the acknowledgement show it. */
export const alarmDto = Joi.object({
  Id: Joi.number()
    .integer()
    .required()
    .description('Its id in the journal (table alarm_journal): what POST /alarms/{id}/ack takes')
    .example(12),
  Code: Joi.string().required().description('Stable code (docs/operations.md, "Alarms")').example('SORTER_LINK_DOWN'),
  Severity: Joi.string().valid('critical', 'major', 'warning').required(),
  Detail: Joi.string().required().description('What was seen when it was raised').example('the sorter has been disconnected for 12 s'),
  WhatToDo: Joi.string()
    .required()
    .description("The runbook's line for this alarm")
    .example(
      "The sorter's PLC is not connected: check that it is powered and running, the cable and switch, and Sorter.Host and Sorter.Port",
    ),
  RaisedAt: Joi.string().required().example('2026-11-27T09:15:03.120Z'),
  ClearedAt: Joi.string().allow(null).required().description('null while active'),
  AcknowledgedAt: Joi.string().allow(null).required(),
  AcknowledgedBy: Joi.string()
    .allow(null)
    .required()
    .description("The name of the API key that acknowledged it (never the key), or the client's address without ApiKeys")
    .example('shift-lead'),
}).label('Alarm');

/** /status's Alarms: those active now. */
export const activeAlarmsDto = Joi.array()
  .items(alarmDto)
  .required()
  .label('ActiveAlarms')
  .description('Active alarms, oldest first (GET /alarms has the journal)');

/** GET /alarms: which part of the journal. */
export const alarmsQuery = Joi.object({
  days: Joi.number()
    .min(0)
    .max(366)
    .default(7)
    .description('The journal of this many days back (default 7); active alarms are always in it')
    .example(7),
}).label('AlarmsQuery');

/** GET /alarms: the active alarms and the journal. */
export const alarmsDto = Joi.object({
  Active: activeAlarmsDto,
  Journal: Joi.array()
    .items(alarmDto)
    .required()
    .label('AlarmJournal')
    .description('Alarms raised within `days` or still active, newest first (at most 500)'),
}).label('Alarms');

/** POST /alarms/{id}/ack: the path parameter. */
export const alarmParams = Joi.object({
  id: Joi.number().integer().min(1).required().description('The alarm (its Id)').example(12),
}).label('AlarmParams');

/** POST /alarms/{id}/ack: the alarm as it stands after the acknowledgement. */
export const alarmAckDto = Joi.object({ Alarm: alarmDto.required() }).label('AlarmAcknowledged');
