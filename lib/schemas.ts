// The joi schemas of the HTTP contract: validation of requests and the OpenAPI documentation of
// responses.
import Joi from 'joi';
import { BatchDoorStatus, DestinationStatus, LightColor, LightStatus } from './enums';
import { FieldWidth, NoTrailingSpace, PrintableAscii } from './fields';
import { DeliveryStates } from './messages';

/**
 * joi schemas for every request and response: the same objects validate requests and build
 * the Swagger document, so the docs cannot drift from the code.
 */

/** A text field that travels to the sorter: printable ASCII, no trailing space, at most its telegram width. */
function telegramText(name: keyof typeof FieldWidth): Joi.StringSchema {
  return Joi.string()
    .max(FieldWidth[name])
    .pattern(PrintableAscii, { name: 'printable ASCII' })
    .pattern(NoTrailingSpace, { name: 'no trailing space' })
    .messages({
      'string.pattern.name': `{{#label}} must be {{#name}} (it travels in a fixed-width sorter telegram)`,
      'string.max': `{{#label}} must be at most {{#limit}} characters (the width of its sorter telegram field)`,
    });
}

const oneOf = (values: readonly string[]) => values.join(', ');

export const timeOutQuery = Joi.object({
  timeOut: Joi.number()
    .unsafe() // 1e25 is a number too: clamped like any other
    .error((errors) =>
      errors.map((e) => {
        // timeOut=1&timeOut=2 arrives as an array: say that, not "must be a number".
        if (e.code === 'number.base' && Array.isArray(e.value)) e.code = 'number.once';
        return e;
      }),
    )
    .messages({ 'number.once': '{{#label}} is given more than once: give it once' })
    .description('Seconds to wait for a message. Any number is accepted, truncated to whole seconds and clamped to 0..30; 0 = immediate check. Omitted: the DefaultTimeOut setting (default 0).')
    .example(10),
})
  .unknown(true)
  .label('TimeOutQuery');

export const assignmentBody = Joi.object({
  TrackID: telegramText('TrackID').required().description('The item being answered (from the REQUEST). Required.').example('0004711'),
  Destination: telegramText('Destination').required().description('Destination identifier. Required.').example('D017'),
  Barcode: telegramText('Barcode').allow('', null).description('Optional; sent to the sorter with the assignment. null (as .NET and Java serializers send for an unset property, e.g. on a no-read) means omitted.').example('4006381333931'),
  Type: Joi.string().allow('', null).description('Optional and ignored; normal integration omits it. null means omitted.'),
})
  .unknown(true)
  .label('AssignmentDto')
  .description('Field names match case-insensitively (trackId binds to TrackID); unknown fields are ignored.');

const enumInput = (values: readonly string[], fallback: string) =>
  Joi.any().description(`Case-insensitive, one of ${oneOf(values)}. Anything else (or omitted) becomes ${fallback}; not an error.`);

export const destinationBody = Joi.object({
  Destination: telegramText('Destination').required().description('Destination identifier. Required.').example('D017'),
  DestinationStatus: enumInput(DestinationStatus, 'NotReady').example('Ready'),
  DestinationText: telegramText('DestinationText').allow('', null).description('Display text; "" (or omitted) clears it.').example('Tour 4711'),
  LightStatus: enumInput(LightStatus, 'Off').example('Solid'),
  LightColor: enumInput(LightColor, 'Off').example('BLUE'),
  BatchDoorStatus: Joi.any().description(`Case-insensitive, one of ${oneOf(BatchDoorStatus)}; omitted or unparsable means not applicable (null).`).example('OPENED'),
  Type: Joi.any().description('Optional and ignored.'),
})
  .unknown(true)
  .label('DestinationSetDto')
  .description('Field names match case-insensitively; unknown fields are ignored.');

// ---- responses (documentation) ----

export const inductDto = Joi.object({
  Type: Joi.string().valid('REQUEST').required(),
  TrackID: Joi.string().required().example('0004711'),
  Barcode: Joi.string().allow('').required().example('4006381333931'),
  MessageCode: Joi.number().integer().required().example(210),
  InductLocation: Joi.string().required().example('IND01'),
  RecirculationCount: Joi.number().integer().required().example(0),
  Length: Joi.number().required().example(320.5),
  Width: Joi.number().required().example(210),
  Height: Joi.number().required().example(95),
  Weight: Joi.number().required().example(1.25),
}).label('InductDto');

export const verifyDto = Joi.object({
  Type: Joi.string().valid('VERIFY').required(),
  TrackID: Joi.string().required().example('0004711'),
  Barcode: Joi.string().allow('').required().example('4006381333931'),
  Destination: Joi.string().required().example('D017'),
  MessageCode: Joi.number().integer().required().example(212),
}).label('VerifyDto');

export const destinationInfoDto = Joi.object({
  Type: Joi.string().valid('SCAN').required(),
  Destination: Joi.string().required().example('D017'),
  DestinationStatus: Joi.string().valid(...DestinationStatus).required(),
  DestinationText: Joi.string().allow('').required().example(''),
  LightStatus: Joi.string().valid(...LightStatus).required(),
  LightColor: Joi.string().valid(...LightColor).required(),
  ButtonID: Joi.number().integer().required().description('0 = no button (NONE in replay files)').example(0),
  MessageCode: Joi.number().integer().required().example(211),
  BatchDoorStatus: Joi.string().valid(...BatchDoorStatus).allow(null).required().description('null when not applicable'),
}).label('DestinationInfoDto');

const defaultApplied = Joi.object({
  Field: Joi.string().example('LightColor'),
  Received: Joi.any()
    .meta({ anyJson: true }) // documented without a type: lib/openapi.ts
    .description('The value as sent (any JSON value; null when the field was omitted)')
    .example('purple'),
  Applied: Joi.string().allow(null).example('Off'),
}).label('DefaultApplied');

const ack = (label: string, message: Joi.ObjectSchema) =>
  Joi.object({
    Accepted: Joi.boolean().valid(true),
    Delivery: Joi.string().valid(...DeliveryStates).description('Sent: written to the sorter. Queued: in the outbox until the sorter link is back. NotSent: test mode.'),
    OutboxID: Joi.number().integer().allow(null).description('Row id in the outbox table (null in test mode)'),
    Message: message,
    DefaultsApplied: Joi.array().items(defaultApplied).description('Fields that did not parse and took the default'),
  }).label(label);

export const assignmentAck = ack(
  'AssignmentAck',
  Joi.object({ TrackID: Joi.string(), Destination: Joi.string(), Barcode: Joi.string().allow('') }).label('Assignment'),
);

export const destinationAck = ack(
  'DestinationSetAck',
  Joi.object({
    Destination: Joi.string(),
    DestinationStatus: Joi.string().valid(...DestinationStatus),
    DestinationText: Joi.string().allow(''),
    LightStatus: Joi.string().valid(...LightStatus),
    LightColor: Joi.string().valid(...LightColor),
    BatchDoorStatus: Joi.string().valid(...BatchDoorStatus).allow(null),
  }).label('DestinationSetting'),
);

const queueCounts = (what: string) => Joi.object({ 'Sortation Q': Joi.number(), 'Destination Q': Joi.number() }).description(what);

export const statusDto = Joi.object({
  Service: Joi.string(),
  Version: Joi.string(),
  State: Joi.string().valid('Running', 'Degraded', 'Stopping').description('Degraded: running, but a readiness check fails or warns (see Problems and /health/ready)'),
  Problems: Joi.array().items(Joi.string()).description('What is wrong, one sentence each (empty when Running)'),
  TestMode: Joi.boolean(),
  StartedAt: Joi.string(),
  UptimeSeconds: Joi.number(),
  'Sortation Q': Joi.number().integer().description('Messages waiting in the sortation queue'),
  'Destination Q': Joi.number().integer().description('Messages waiting in the destination queue'),
  OldestMessageAgeSeconds: Joi.number().allow(null).description('Age of the oldest waiting message, null when both queues are empty'),
  WaitingClients: queueCounts('Long polls waiting on each queue'),
  Sorter: Joi.object({
    Connected: Joi.boolean(),
    Address: Joi.string().allow(null),
    Since: Joi.string().allow(null),
    LastTelegramIn: Joi.string().allow(null),
    LastTelegramOut: Joi.string().allow(null),
    TelegramsIn: Joi.number().integer(),
    TelegramsOut: Joi.number().integer(),
    Resends: Joi.number().integer(),
    NaksSent: Joi.number().integer(),
    NaksReceived: Joi.number().integer(),
    DuplicatesReceived: Joi.number().integer(),
    GarbageBytes: Joi.number().integer(),
    Reconnects: Joi.number().integer().description('Connections made after the first one'),
    ConnectionsLost: Joi.number().integer().description('Connections that were up and dropped (by either side, or declared dead)'),
    ConnectAttemptsFailed: Joi.number().integer().description('Connection attempts that never connected'),
    DroppedAssignments: Joi.number().integer(),
    DroppedSettings: Joi.number().integer(),
    InFlight: Joi.number().integer(),
  })
    .label('SorterLinkStatus')
    .description('The link to the sorter (test mode: not connected, counters 0)'),
  Outbox: Joi.object({ Depth: Joi.number().integer() }).unknown(true).label('OutboxStatus'),
  Replay: Joi.object({
    File: Joi.string().allow(null),
    RowsLoaded: Joi.number().integer(),
    RowsSkipped: Joi.number().integer(),
    Error: Joi.string().allow(null),
  }).allow(null).label('ReplaySummary').description('Test mode only: what was loaded from the replay file'),
  Delivery: Joi.object({
    Mode: Joi.string().valid('AtLeastOnce', 'AtMostOnce'),
    AwaitingProof: Joi.number().integer().description('Messages whose response went out and whose read is not proven yet (invisible to other clients)'),
    Confirmed: Joi.object({
      NextRequest: Joi.number().integer(),
      ClientClose: Joi.number().integer(),
      ServerClose: Joi.number().integer(),
      Grace: Joi.number().integer(),
      Injected: Joi.number().integer(),
    }).label('DeliveryConfirmed').description('Messages removed from their queue, by what proved the read'),
    Returned: Joi.object({ Reset: Joi.number().integer(), ClosedUnread: Joi.number().integer(), NoProof: Joi.number().integer() })
      .label('DeliveryReturned')
      .description('Messages put back at the head of their queue, by reason'),
    Redelivered: Joi.number().integer().description('Deliveries of a message whose earlier response went out without proof: possible duplicates'),
  })
    .label('DeliveryStatus')
    .description('How handed-out messages left their queues since start (docs/queue-semantics.md)'),
  RequestsRemoved: Joi.object({ Superseded: Joi.number().integer(), Expired: Joi.number().integer() })
    .label('RequestsRemoved')
    .description('REQUESTs taken out of the sortation queue since start without reaching a WCS: Superseded (a newer REQUEST for the same TrackID arrived, DropSupersededRequests), Expired (MaxRequestAgeSeconds)'),
  WakeLatency: Joi.object({ P50Ms: Joi.number().allow(null), P99Ms: Joi.number().allow(null), Samples: Joi.number().integer() })
    .label('WakeLatency')
    .description('From a sorter telegram arriving to the response that hands its message to a client that was waiting for it (last 10,000 such messages; messages that queue because no client is waiting are not counted)'),
  Storage: Joi.object({
    State: Joi.string().valid('Ok', 'Stalled', 'Failing').description('Stalled: a commit has waited over 1 s (a lock, a slow disk); Failing: the last transaction failed'),
    Since: Joi.string().isoDate().description('Since when the state holds'),
    WaitingFor: Joi.string().valid('Lock', 'Disk').allow(null).description('Stalled: what the commit in flight waits for'),
    PendingWrites: Joi.number().integer().description('Writes handed to the writer and not yet answered'),
    LastCommitMs: Joi.number().allow(null).description('Duration of the last committed transaction, lock wait included'),
    Commits: Joi.number().integer().description('Transactions committed since start'),
    Writes: Joi.number().integer().description('Writes those transactions carried (group commit)'),
    LastError: Joi.string().allow(null).description('Failing: why the last transaction failed'),
    ReadOnly: Joi.boolean().description('The database file cannot be written: messages can be read, nothing is accepted'),
  })
    .label('StorageStatus')
    .description('The one writer and its disk (docs/queue-semantics.md, "Storage")'),
}).label('Status');

/** An error body as the service sends it, with an example of its own (a model per kind of error). */
export const errorDto = (label: string, statusCode: number, error: string, message: string) =>
  Joi.object({
    statusCode: Joi.number().integer().required().example(statusCode),
    error: Joi.string().required().example(error),
    message: Joi.string().required().example(message),
  })
    .unknown(true)
    .label(label);

const healthCheck = Joi.object({
  status: Joi.string().valid('pass', 'warn', 'fail').required(),
  observedValue: Joi.alternatives().try(Joi.string(), Joi.number(), Joi.boolean()).allow(null).meta({ anyJson: true }).description('What the check saw'),
  observedUnit: Joi.string(),
  output: Joi.string().description('Why, when not pass'),
  time: Joi.string().required(),
}).label('HealthCheck');

/** GET /health/live and /health/ready (the IETF health-check draft's shape). */
export const healthReport = Joi.object({
  status: Joi.string().valid('pass', 'warn', 'fail').required().description('The worst status of the checks'),
  checks: Joi.object()
    .pattern(Joi.string(), Joi.array().items(healthCheck).length(1))
    .required()
    .description('By name: eventLoop:delay (live); database:writable, database:migrations, sorter:link (ready)'),
}).label('HealthReport');

/** GET /items/{TrackID}: the path parameter. */
export const itemParams = Joi.object({
  TrackID: Joi.string().max(20).required().description('The item (TrackID as the sorter sends it)').example('0004711'),
}).label('ItemParams');

/** GET /items/{TrackID}: what happened to an item, oldest first. */
export const itemTimelineDto = Joi.object({
  TrackID: Joi.string().required().example('0004711'),
  Events: Joi.array()
    .items(
      Joi.object({
        Time: Joi.string().required().example('2026-11-22T10:15:03.120Z'),
        Event: Joi.string()
          .valid('RequestReceived', 'RequestDelivered', 'RequestRemoved', 'RequestWaiting', 'AssignmentPosted', 'AssignmentAcknowledged', 'AssignmentDropped', 'AssignmentQueued', 'VerifyReceived', 'VerifyDelivered', 'VerifyWaiting')
          .required(),
        Text: Joi.string().required().example('REQUEST handed to 10.20.0.9'),
        RecirculationCount: Joi.number().integer(),
        Destination: Joi.string(),
        Client: Joi.string().allow(null),
        Attempt: Joi.number().integer(),
        ReadProof: Joi.string().allow(null),
        Reason: Joi.string(),
      }).label('ItemEvent'),
    )
    .required(),
}).label('ItemTimeline');
