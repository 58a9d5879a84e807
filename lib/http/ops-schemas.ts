// The joi schemas of the operator's HTTP contract: /status, the health checks, an item's
// timeline and the dead letters. The same objects validate requests and build the Swagger
// document, so the docs cannot drift from the code.
import Joi from 'joi';
import { activeAlarmsDto } from './alarm-schemas';

const queueCounts = (what: string) =>
  Joi.object({ 'Sortation Q': Joi.number().required(), 'Destination Q': Joi.number().required() }).required().description(what);

/** Dead letters by the queue they left (GET /status, GET /dead-letters). */
const deadLetterCounts = queueCounts(
  'Messages in the dead letters (table dead_letters), by the queue they left: handed out MaxDeliveries times without proof of the read. GET /dead-letters lists them, POST /dead-letters/requeue sends them back',
).label('DeadLetterCounts');

/** A latency window's percentiles (ms; null without samples) and its samples since start (lib/ops/latency.ts). */
const latencySummary = {
  P50Ms: Joi.number().allow(null).required(),
  P99Ms: Joi.number().allow(null).required(),
  Samples: Joi.number().integer().required(),
};

/** GET /status: the service, its queues, the sorter link, deliveries and the storage. */
export const statusDto = Joi.object({
  Service: Joi.string().required(),
  Version: Joi.string().required(),
  State: Joi.string()
    .valid('Running', 'Degraded', 'Stopping')
    .required()
    .description('Degraded: running, but a readiness check fails or warns (see Problems and /health/ready)'),
  Problems: Joi.array().items(Joi.string()).required().description('What is wrong, one sentence each (empty when Running)'),
  TestMode: Joi.boolean().required(),
  StartedAt: Joi.string().required(),
  UptimeSeconds: Joi.number().required(),
  'Sortation Q': Joi.number().integer().required().description('Messages waiting in the sortation queue'),
  'Destination Q': Joi.number().integer().required().description('Messages waiting in the destination queue'),
  OldestMessageAgeSeconds: Joi.number()
    .allow(null)
    .required()
    .description('Age of the oldest waiting message, null when both queues are empty'),
  WaitingClients: queueCounts('Long polls waiting on each queue'),
  Sorter: Joi.object({
    Connected: Joi.boolean().required(),
    Address: Joi.string().allow(null).required(),
    Since: Joi.string().allow(null).required(),
    LastTelegramIn: Joi.string().allow(null).required(),
    LastTelegramOut: Joi.string().allow(null).required(),
    State: Joi.string()
      .valid('Connected', 'Disconnected', 'Refusing')
      .required()
      .description(
        "Refusing: connected, but the sorter's telegrams are refused for a reason that will not pass by itself (RefusingBecause)",
      ),
    RefusingBecause: Joi.string()
      .allow(null)
      .required()
      .description("Why the sorter's telegrams are refused (a schema error, a numbering the store cannot accept), else null"),
    TelegramsIn: Joi.number().integer().required(),
    TelegramsOut: Joi.number().integer().required(),
    Resends: Joi.number().integer().required(),
    NaksSent: Joi.number().integer().required(),
    NaksReceived: Joi.number().integer().required(),
    DuplicatesReceived: Joi.number().integer().required(),
    GarbageBytes: Joi.number().integer().required(),
    Reconnects: Joi.number().integer().required().description('Connections made after the first one'),
    ConnectionsLost: Joi.number()
      .integer()
      .required()
      .description('Connections that were up and dropped (by either side, or declared dead)'),
    ConnectAttemptsFailed: Joi.number().integer().required().description('Connection attempts that never connected'),
    DroppedAssignments: Joi.number().integer().required(),
    DroppedSettings: Joi.number().integer().required(),
    InFlight: Joi.number().integer().required(),
  })
    .required()
    .label('SorterLinkStatus')
    .description('The link to the sorter (test mode: not connected, counters 0)'),
  Outbox: Joi.object({ Depth: Joi.number().integer().required() }).unknown(true).required().label('OutboxStatus'),
  Replay: Joi.object({
    File: Joi.string().allow(null).required(),
    RowsLoaded: Joi.number().integer().required(),
    RowsSkipped: Joi.number().integer().required(),
    Error: Joi.string().allow(null).required(),
  })
    .allow(null)
    .required()
    .label('ReplaySummary')
    .description('Test mode only: what was loaded from the replay file'),
  Delivery: Joi.object({
    Mode: Joi.string().valid('AtLeastOnce', 'AtMostOnce').required(),
    AwaitingProof: Joi.number()
      .integer()
      .required()
      .description('Messages whose response went out and whose read is not proven yet (invisible to other clients)'),
    Confirmed: Joi.object({
      NextRequest: Joi.number().integer().required(),
      ClientClose: Joi.number().integer().required(),
      ServerClose: Joi.number().integer().required(),
      LastResponse: Joi.number().integer().required(),
      Acknowledged: Joi.number().integer().required(),
      Answered: Joi.number().integer().required(),
      Grace: Joi.number().integer().required(),
      Injected: Joi.number().integer().required(),
    })
      .required()
      .label('DeliveryConfirmed')
      .description('Messages removed from their queue, by what proved the read'),
    Returned: Joi.object({
      Reset: Joi.number().integer().required(),
      ClosedUnread: Joi.number().integer().required(),
      NoProof: Joi.number().integer().required(),
    })
      .required()
      .label('DeliveryReturned')
      .description('Messages put back at the head of their queue, by reason'),
    Redelivered: Joi.number()
      .integer()
      .required()
      .description('Deliveries of a message whose earlier response went out without proof: possible duplicates'),
    DeadLettered: Joi.number()
      .integer()
      .required()
      .description('Messages moved to the dead letters since start: handed out MaxDeliveries times without proof of the read'),
  })
    .required()
    .label('DeliveryStatus')
    .description('How handed-out messages left their queues since start (docs/queue-semantics.md)'),
  DeadLetters: deadLetterCounts,
  RequestsRemoved: Joi.object({ Superseded: Joi.number().integer().required(), Expired: Joi.number().integer().required() })
    .required()
    .label('RequestsRemoved')
    .description(
      'REQUESTs taken out of the sortation queue since start without reaching a WCS: Superseded (a newer REQUEST for the same TrackID arrived, DropSupersededRequests), Expired (MaxRequestAgeSeconds)',
    ),
  WakeLatency: Joi.object(latencySummary)
    .required()
    .label('WakeLatency')
    .description(
      'From a sorter telegram arriving to the response that hands its message to a client that was waiting for it (last 10,000 such messages; messages that queue because no client is waiting are not counted)',
    ),
  DecisionLatency: Joi.object({
    ...latencySummary,
    Samples: latencySummary.Samples.description('Decisions since start'),
    Awaiting: Joi.number()
      .integer()
      .required()
      .description('REQUESTs of the last 60 s from the sorter still without an assignment (handed to a WCS or still queued)'),
    Late: Joi.number()
      .integer()
      .required()
      .description(
        'REQUESTs since start whose assignment came later than LateDecisionMs, or not at all (0 with LateDecisionMs 0; one never answered is counted in live mode only)',
      ),
  })
    .required()
    .label('DecisionLatency')
    .description(
      "From a REQUEST arriving from the sorter to the WCS's assignment for its TrackID being accepted (last 10,000 decisions), and the REQUESTs that wait for one (live mode; all 0 in test mode, whose REQUESTs are loaded from the replay file)",
    ),
  Storage: Joi.object({
    State: Joi.string()
      .valid('Ok', 'Stalled', 'Failing')
      .required()
      .description(
        'Stalled: a commit has waited over 1 s (a lock), or a disk sync has lasted over 1 s (a stalled card; commits go on); Failing: the last transaction failed',
      ),
    Since: Joi.string().isoDate().required().description('Since when the state holds'),
    WaitingFor: Joi.string()
      .valid('Lock', 'Disk')
      .allow(null)
      .required()
      .description("Stalled: what holds it up: another connection's lock (commits wait), or the disk (its sync; commits go on)"),
    PendingWrites: Joi.number().integer().required().description('Writes handed to the writer and not yet answered'),
    LastCommitMs: Joi.number().allow(null).required().description('Duration of the last committed transaction, lock wait included'),
    Commits: Joi.number().integer().required().description('Transactions committed since start'),
    Writes: Joi.number().integer().required().description('Writes those transactions carried (group commit)'),
    Syncs: Joi.number()
      .integer()
      .required()
      .description(
        'Disk syncs of the WAL since start, made beside the commits: for the sorter telegrams (and other writes) that must be durable before they are answered, and for POSTs the sorter did not acknowledge within the commit window (DurableBySorterAck). Each is a flush an SD card or eMMC must complete',
      ),
    SyncInFlightMs: Joi.number()
      .allow(null)
      .required()
      .description('How long the disk sync in flight has lasted (ms); null when none is. Commits go on meanwhile'),
    AckedBeforeSync: Joi.number()
      .integer()
      .required()
      .description(
        'Sorter telegrams acknowledged before their sync ended, since start (AckUnsyncedAfterMs: a stalled disk); a power cut during such a stall may lose them',
      ),
    LastError: Joi.string().allow(null).required().description('Failing: why the last transaction failed'),
    Failures: Joi.number().integer().required().description('Transactions that failed since start (a full disk, a read-only file)'),
    LastFailure: Joi.object({
      At: Joi.string().isoDate().required(),
      Error: Joi.string().required(),
    })
      .allow(null)
      .required()
      .description(
        'The last failed transaction, when and why, kept once commits succeed again: on a nearly full disk small commits may go through between failed ones, and State turns Ok between them',
      ),
    ReadOnly: Joi.boolean().required().description('The database file cannot be written: messages can be read, nothing is accepted'),
    Disk: Joi.object({
      State: Joi.string()
        .valid('Ok', 'Low', 'Unknown')
        .required()
        .description(
          "Low: less is free on the database's file system than LowBelowBytes (HistoryKeepFreeShare of it, at least 2%): the history is cut so that the database does not grow, but the disk is filling; Unknown: its size cannot be read",
        ),
      FreeBytes: Joi.number().integer().allow(null).required().description('Free on the file system (what the service may still use)'),
      SizeBytes: Joi.number().integer().allow(null).required().description("The file system's size"),
      LowBelowBytes: Joi.number().integer().allow(null).required().description('The disk is Low below this much free'),
    })
      .required()
      .label('DiskStatus')
      .description('The file system that holds the database, as last measured (every 4 s)'),
    History: Joi.object({
      FilesBytes: Joi.number()
        .integer()
        .required()
        .description('The database file, its WAL and the traffic log together: what the size bound counts'),
      DatabaseBytes: Joi.number().integer().required(),
      WalBytes: Joi.number().integer().required(),
      TrafficLogBytes: Joi.number().integer().required().description('Service_PLC.log and its rotated files (0 when not kept)'),
      UsedDatabaseBytes: Joi.number()
        .integer()
        .required()
        .description("The database's pages in use; the rest of the file is pages the purge freed, which new rows reuse"),
      BoundBytes: Joi.number()
        .integer()
        .allow(null)
        .required()
        .description('The most the database, its WAL and the traffic log may take together; null when the file system cannot be measured'),
      BoundBy: Joi.string()
        .valid('HistoryMaxBytes', 'HistoryMaxDiskShare', 'HistoryKeepFreeShare', 'None')
        .required()
        .description('The setting that makes the bound now (HistoryKeepFreeShare: the free space, what other programs take counted)'),
      Rows: Joi.number().integer().required().description('Rows of delivered_history and outbox_history (from their ids)'),
      OldestAt: Joi.string().allow(null).required().description('The oldest delivery the history holds'),
      RetentionDays: Joi.number().integer().required().description('HistoryRetentionDays: the age bound'),
      BytesPerDay: Joi.number()
        .integer()
        .allow(null)
        .required()
        .description(
          "The history's bytes a day, at the rate it shows itself (its pages in use over the time it spans); null while it spans less than 10 s, unless a rate was measured before (a cut left less: that rate is kept)",
        ),
      DaysFit: Joi.number().allow(null).required().description('Days of history the size bound holds at that rate'),
      RetentionMet: Joi.boolean()
        .allow(null)
        .required()
        .description('false: the size bound cuts the history short of HistoryRetentionDays (logged once as a warning)'),
      SizeCutsFrom: Joi.string()
        .allow(null)
        .required()
        .description(
          'When the size bound begins to cut the history short of HistoryRetentionDays (now or earlier: it does); null when it does not',
        ),
      Cuts: Joi.number().integer().required().description('Purges made for the size bound since start'),
      CutRows: Joi.number().integer().required().description('History rows they purged'),
      LastCut: Joi.object({
        At: Joi.string().required(),
        Rows: Joi.number().integer().required(),
        Cutoff: Joi.string().required(),
        Chunks: Joi.number().integer().required(),
        Ms: Joi.number().integer().required(),
      })
        .allow(null)
        .required()
        .label('HistoryCut')
        .description('The last purge for the size bound: when, how many rows, delivered before when, in how many chunks, how long'),
      MeasuredAt: Joi.string().required(),
    })
      .required()
      .label('HistoryStorage')
      .description(
        'The delivery history bounded by age (HistoryRetentionDays) and by size (HistoryMaxBytes or HistoryMaxDiskShare, HistoryKeepFreeShare), as last measured (every 4 s); docs/operations.md, "Sizing the card"',
      ),
  })
    .required()
    .label('StorageStatus')
    .description('The one writer and its disk (docs/queue-semantics.md, "Storage")'),
  Alarms: activeAlarmsDto,
}).label('Status');

const healthCheck = Joi.object({
  status: Joi.string().valid('pass', 'warn', 'fail').required(),
  observedValue: Joi.alternatives()
    .try(Joi.string(), Joi.number(), Joi.boolean())
    .allow(null)
    .meta({ anyJson: true })
    .description('What the check saw'),
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
          .valid(
            'RequestReceived',
            'RequestDelivered',
            'RequestRemoved',
            'RequestWaiting',
            'RequestDeadLettered',
            'AssignmentPosted',
            'AssignmentAcknowledged',
            'AssignmentDropped',
            'AssignmentQueued',
            'VerifyReceived',
            'VerifyDelivered',
            'VerifyWaiting',
            'VerifyDeadLettered',
          )
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

/** GET /dead-letters: which ones. */
export const deadLetterQuery = Joi.object({
  queue: Joi.string().valid('sortation', 'destination').description('Only the dead letters of this queue').example('sortation'),
  limit: Joi.number().integer().min(1).max(1000).default(100).description('At most this many, the oldest first (default 100)'),
}).label('DeadLetterQuery');

/** GET /dead-letters: the oldest dead letters, and how many there are. */
export const deadLetterListDto = Joi.object({
  Counts: deadLetterCounts,
  DeadLetters: Joi.array()
    .items(
      Joi.object({
        Id: Joi.number().integer().required().description('Its id in dead_letters (what POST /dead-letters/requeue takes)').example(3),
        Queue: Joi.string().valid('sortation', 'destination').required(),
        MessageId: Joi.number()
          .integer()
          .required()
          .description('Its X-Message-Id; it goes back under this id, in its old place')
          .example(17),
        Type: Joi.string().valid('REQUEST', 'VERIFY', 'SCAN').required(),
        TrackID: Joi.string().allow(null).required().example('0004711'),
        Destination: Joi.string().allow(null).required().description('Destination, or InductLocation for a REQUEST').example('IND01'),
        ReceivedAt: Joi.string().required().example('2026-11-25T10:15:03.120Z'),
        DeadAt: Joi.string().required().example('2026-11-25T10:15:04.020Z'),
        Attempts: Joi.number().integer().required().description('Deliveries that ended without proof of the read').example(10),
        LastClient: Joi.string().allow(null).required().description('The client that had it last').example('10.20.0.9'),
        LastReturn: Joi.string().valid('NoProof', 'Reset').required().description('How its last delivery ended'),
        Message: Joi.object().unknown(true).required().description('The message as clients received it'),
      }).label('DeadLetter'),
    )
    .required(),
}).label('DeadLetterList');

/** POST /dead-letters/requeue: which dead letters go back. */
export const requeueBody = Joi.object({
  Ids: Joi.array()
    .items(Joi.number().integer().min(1))
    .min(1)
    .max(10000)
    .description('Ids of dead letters (GET /dead-letters) to send back')
    .example([3, 4]),
  All: Joi.boolean().valid(true).description('true: send every dead letter back'),
})
  .xor('Ids', 'All')
  .messages({
    'object.missing': 'give "Ids" (the dead letters to send back) or "All": true',
    'object.xor': 'give "Ids" or "All", not both',
  })
  .label('RequeueDeadLetters')
  .description('Field names match case-insensitively.');

/** POST /dead-letters/requeue: what went back. */
export const requeueAck = Joi.object({
  Requeued: Joi.number().integer().required().description('How many went back to their queues (unknown ids are skipped)').example(2),
  Messages: Joi.array()
    .items(
      Joi.object({ Queue: Joi.string().valid('sortation', 'destination').required(), MessageId: Joi.number().integer().required() }).label(
        'RequeuedMessage',
      ),
    )
    .required(),
}).label('RequeueAck');
