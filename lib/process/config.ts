// config.json: its keys, defaults and validation, and where the database file lives.
import { HELPER_THREAD_NICE } from './thread-priority';
import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import net from 'node:net';
import { ACK_UNSYNCED_AFTER_MS, HOLD_MS, WINDOW_MS, WINDOW_MS_COMMITTED_ONLY } from '../../db/commit-plan';
import { POST_GROUP_MS } from '../../db/writer';
import { duplicateKeys } from './json-keys';
import { errorCode, errorMessage } from './errors';

/** Settings from config.json, after validation and defaults. Keys keep the spec's PascalCase. */
export interface Config {
  TestMode: boolean;
  Port: number;
  Host: string;
  DefaultTimeOut: number;
  Delivery: 'AtLeastOnce' | 'AtMostOnce';
  VisibilityTimeoutSeconds: number;
  DeliveryCloseGraceMs: number;
  MaxDeliveries: number;
  Database: string;
  TestDatabase: string;
  Synchronous: 'FULL' | 'NORMAL';
  GroupCommit: boolean;
  CommitWindowMs: number;
  HandOutBeforeCommit: boolean;
  DurableBySorterAck: boolean;
  UnsyncedHoldMs: number;
  PostGroupMs: number;
  AckUnsyncedAfterMs: number | null;
  HelperThreadNice: number;
  CommitTimeoutMs: number;
  DropSupersededRequests: boolean;
  MaxRequestAgeSeconds: number;
  HistoryRetentionDays: number;
  HistoryMaxBytes: number | null;
  HistoryMaxDiskShare: number;
  HistoryKeepFreeShare: number;
  ExternalChangePollMs: number;
  MaxPayloadBytes: number;
  /** A plain string: a key with every right (as before roles); an object: a named key with one role. */
  ApiKeys: Array<string | NamedApiKey>;
  TrustedProxies: string[];
  LogLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  AccessLog: 'all' | 'errors' | 'off';
  ChartSampleSeconds: number;
  LateDecisionMs: number;
  Sorter: SorterSettings;
  Alarms: AlarmSettings;
}

/** Who may call what (lib/http/auth.ts, docs/operations.md "Who may do what"). */
export type ApiRole = 'wcs' | 'operator' | 'monitor';

/** A named API key with its role; the name appears in the log, the key never does. */
export interface NamedApiKey {
  Name: string;
  Key: string;
  Role: ApiRole;
}

/** When the alarms are raised (lib/ops/alarm-rules.ts, docs/operations.md "Alarms"). 0 switches a threshold's alarm off. */
export interface AlarmSettings {
  EvaluateSeconds: number;
  LinkDownSeconds: number;
  LinkDropsInTenMinutes: number;
  SorterSilentSeconds: number;
  WcsPollSeconds: number;
  QueueAgeSeconds: number;
  OutboxAgeSeconds: number;
  StorageStalledSeconds: number;
  MinFreeDiskBytes: number;
  ClearAfterSeconds: number;
}

/** The live link to the sorter PLC (docs/sorter-protocol.md). */
export interface SorterSettings {
  Host: string;
  Port: number;
  Name: string;
  PeerName: string;
  HeartbeatMs: number;
  AckTimeoutMs: number;
  Window: number;
  ReconnectMaxMs: number;
  AssignmentTtlSeconds: number;
  TrafficLog: boolean;
  TrafficLogMaxBytes: number;
  TrafficLogFiles: number;
  TrafficLogMinFreeBytes: number;
  Layout: string;
}

/** Every setting, its default and its one-line meaning; docs/configuration.md's table mirrors this. */
export const configSchema = Joi.object<Config>({
  TestMode: Joi.boolean().default(false).description('Replay Service_PLC.csv/.log instead of talking to a sorter'),
  Port: Joi.number().port().default(8081).description('HTTP listening port'),
  Host: Joi.string().default('0.0.0.0').description('HTTP listening address'),
  DefaultTimeOut: Joi.number().min(0).max(30).default(0).description('Long-poll wait in seconds when a GET has no timeOut'),
  Delivery: Joi.string()
    .valid('AtLeastOnce', 'AtMostOnce')
    .default('AtLeastOnce')
    .description(
      'AtLeastOnce: a message leaves its queue only with proof that the client read it (else it is delivered again); AtMostOnce: once its response was written and nothing failed within 5 ms',
    ),
  VisibilityTimeoutSeconds: Joi.number()
    .min(1)
    .max(3600)
    .default(30)
    .description('AtLeastOnce: without proof after this long, the client is asked by closing its connection'),
  DeliveryCloseGraceMs: Joi.number()
    .integer()
    .min(0)
    .max(5000)
    .default(50)
    .description("After a client's close, how long to watch for the reset that says it had not read its last response"),
  MaxDeliveries: Joi.number()
    .integer()
    .min(0)
    .max(1000)
    .default(10)
    .description(
      'A message handed out this many times without proof that a client read it leaves its queue for the dead letters (table dead_letters; POST /dead-letters/requeue sends it back); 0 = never',
    ),
  Database: Joi.string().default('data/sorter.db').description('Live-mode SQLite file, relative to the service home'),
  TestDatabase: Joi.string().default('data/sorter-test.db').description('Test-mode SQLite file, emptied and re-seeded at each start'),
  Synchronous: Joi.string().valid('FULL', 'NORMAL').default('FULL').description('SQLite synchronous mode: FULL survives a power cut'),
  GroupCommit: Joi.boolean()
    .default(true)
    .description(
      'Commit the writes that arrive while a commit is in progress together in the next one (one fsync), acknowledging each after its commit',
    ),
  CommitWindowMs: Joi.number()
    .integer()
    .min(0)
    .max(100)
    .default((parent: { HandOutBeforeCommit?: boolean }) => (parent.HandOutBeforeCommit === false ? WINDOW_MS_COMMITTED_ONLY : WINDOW_MS))
    .description(
      `How long a sorter telegram's write waits for others to share its disk sync and its pages: longer writes less and acknowledges later (a POST's write does not wait it: see PostGroupMs). Default ${WINDOW_MS}, or ${WINDOW_MS_COMMITTED_ONLY} with HandOutBeforeCommit false`,
    ),
  HandOutBeforeCommit: Joi.boolean()
    .default(true)
    .description(
      'A waiting WCS gets a message from the sorter as soon as its telegram arrives, while its commit waits in the commit window (the sorter still gets its ACK only after the commit); a crash before that commit hands the message out a second time, when the sorter sends it again',
    ),
  DurableBySorterAck: Joi.boolean()
    .default(true)
    .description(
      "A POST's assignment or destination setting is committed without a disk sync and sent to the sorter at once, and answered 200 once the sorter acknowledged it or a sync made it durable, whichever comes first (either survives a power cut); only while the link is up and acknowledges each telegram. false: answered only once synced, sent after the sync",
    ),
  UnsyncedHoldMs: Joi.number()
    .integer()
    .min(0)
    .max(5000)
    .default(HOLD_MS)
    .description(
      'How long a write that needs no sync (a delivery recorded, an acknowledged assignment) may be held to be committed with others: longer writes less, and a crash hands more deliveries out again',
    ),
  AckUnsyncedAfterMs: Joi.number()
    .integer()
    .min(0)
    .max(60000)
    .allow(null)
    .default(ACK_UNSYNCED_AFTER_MS)
    .description(
      "A sorter telegram committed (in the WAL, in the page cache: a crash of the process keeps it) whose disk sync has not ended this many ms after its commit is acknowledged without it, and while a sync has lasted this long (a stalled card) every telegram is acknowledged as it commits, so that the sorter's send window never fills behind a stall; a power cut during such a stall may lose those telegrams. null: acknowledged only once synced (the sorter waits out every stall)",
    ),
  PostGroupMs: Joi.number()
    .integer()
    .min(0)
    .max(20)
    .default(POST_GROUP_MS)
    .description(
      "While the WCS's POSTs come less than this many ms apart (hundreds a second), the write of one that goes to the sorter before its sync (DurableBySorterAck) waits up to this long for the next, to share a commit: less CPU and fewer writes an item, a decision up to this much later; at a few POSTs a second none waits. 0 = every POST's write goes at once",
    ),
  HelperThreadNice: Joi.number()
    .integer()
    .min(0)
    .max(19)
    .default(HELPER_THREAD_NICE)
    .description(
      "Linux: the niceness of the process's helper threads (V8's compiler and garbage-collector helpers, libuv's pool that writes the logs), so that the event loop (the sorter link, the WCS's polls) and the writer thread never wait for a core behind them; 0 leaves them at the service's own priority",
    ),
  CommitTimeoutMs: Joi.number()
    .integer()
    .min(100)
    .max(60000)
    .default(2000)
    .description(
      'A POST whose write the storage has not started within this long is answered 503 with Retry-After, and nothing is written',
    ),
  DropSupersededRequests: Joi.boolean()
    .default(true)
    .description(
      'Live mode: a REQUEST takes the older REQUESTs of the same TrackID (the item went round again) out of the queue, recorded in the history as Superseded',
    ),
  MaxRequestAgeSeconds: Joi.number()
    .min(0)
    .max(86400)
    .default(0)
    .description('Live mode: REQUESTs waiting longer than this are taken out of the queue (history: Expired); 0 = never'),
  HistoryRetentionDays: Joi.number().integer().min(0).default(30).description('Days delivered messages stay in the history table'),
  HistoryMaxBytes: Joi.number()
    .integer()
    .min(1048576)
    .allow(null)
    .default(null)
    .description(
      'The most the database, its WAL and the traffic log may take on the disk together (bytes): past it the oldest history goes first, whatever HistoryRetentionDays says. null: HistoryMaxDiskShare of the file system',
    ),
  HistoryMaxDiskShare: Joi.number()
    .min(0.01)
    .max(0.9)
    .default(0.4)
    .description(
      'With HistoryMaxBytes null: the share of the file system (its size) the database, its WAL and the traffic log may take together',
    ),
  HistoryKeepFreeShare: Joi.number()
    .min(0)
    .max(0.5)
    .default(0.1)
    .description(
      'The oldest history is also cut while less than this share of the file system would stay free (whatever takes the space); below it the disk is Low in GET /status. 0: no reserve',
    ),
  ExternalChangePollMs: Joi.number()
    .integer()
    .min(10)
    .max(5000)
    .default(100)
    .description(
      'How often waiting polls look for rows committed by other processes while the database changes; backs off to 2 s while it does not',
    ),
  MaxPayloadBytes: Joi.number().integer().min(256).max(1048576).default(16384).description('Largest accepted request body (413 beyond)'),
  ApiKeys: Joi.array()
    .items(
      // A string is a plain key; anything else must be a named key (its errors name the field).
      Joi.alternatives().conditional(Joi.string(), {
        then: Joi.string().min(1),
        otherwise: Joi.object({
          Name: Joi.string()
            .min(1)
            .max(64)
            .pattern(/^[\x21-\x7e]+$/)
            .required()
            .description('What the log says of the key (never the key itself)'),
          Key: Joi.string().min(1).required(),
          Role: Joi.string()
            .valid('wcs', 'operator', 'monitor')
            .required()
            .description(
              'wcs: the queues and the POSTs; operator: the dashboard, alarms, dead letters, item traces, and what monitor may; monitor: /status, /metrics, /health/*, GET /alarms',
            ),
        }),
      }),
    )
    .unique((a, b) => keyOf(a) === keyOf(b))
    .unique((a, b) => typeof a === 'object' && typeof b === 'object' && a.Name === b.Name)
    .messages({ 'array.unique': '"ApiKeys" has the same key or the same Name twice ({{#path}})' })
    .default([])
    .description(
      'If not empty, every API call needs one of these in X-API-Key: a plain string may call everything, a { Name, Key, Role } object what its role may',
    ),
  TrustedProxies: Joi.array()
    .items(
      Joi.string().custom((value: string, helpers) => {
        const problem = trustedProxyProblem(value);
        return problem ? helpers.message({ custom: `"TrustedProxies" entry ${problem}` }) : value;
      }),
    )
    .default([])
    .description(
      'Reverse proxies (addresses or CIDR blocks) whose X-Forwarded-For names the client in logs, the delivery history and the outbox; empty: the header is ignored',
    ),
  LogLevel: Joi.string()
    .valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')
    .default('info')
    .description('Log level (JSON lines on stdout)'),
  AccessLog: Joi.string()
    .valid('all', 'errors', 'off')
    .default('errors')
    .description("Access log lines: all (every request, with a long poll's outcome), errors (status 400 and above), off"),
  ChartSampleSeconds: Joi.number()
    .min(0.1)
    .max(60)
    .default(10)
    .description(
      "The dashboard's last hour: one sample of rates, decision latency, queues and link every this many seconds, the last 360 kept in memory",
    ),
  LateDecisionMs: Joi.number()
    .integer()
    .min(0)
    .max(60000)
    .default(1000)
    .description(
      "A decision (a REQUEST's arrival to its assignment) slower than this is late: counted in the dashboard's last hour, and in live mode the alarm DECISIONS_LATE; set it to the part of the sorter's decision window left to the WCS. 0 = nothing counts as late (the alarm off)",
    ),
  Sorter: Joi.object({
    Host: Joi.string().default('127.0.0.1').description('Sorter PLC address'),
    Port: Joi.number().port().default(2000).description('Sorter PLC TCP port'),
    Name: Joi.string()
      .max(6)
      .pattern(/^[\x21-\x7e]+$/)
      .default('WCS01')
      .description('Our name in telegram headers (sender)'),
    PeerName: Joi.string()
      .max(6)
      .pattern(/^[\x21-\x7e]+$/)
      .default('PLC01')
      .description("The sorter's name in telegram headers"),
    HeartbeatMs: Joi.number()
      .integer()
      .min(100)
      .max(60000)
      .default(2000)
      .description(
        "Send LIFE after this much silence (or after half of it or more, to go out on the clock's multiples of it); 3x without traffic = link dead",
      ),
    AckTimeoutMs: Joi.number().integer().min(50).max(60000).default(1000).description('Resend unacknowledged telegrams after this long'),
    Window: Joi.number().integer().min(1).max(1000).default(64).description('Telegrams sent and not yet acknowledged, at most'),
    ReconnectMaxMs: Joi.number().integer().min(100).max(300000).default(5000).description('Cap of the reconnect backoff'),
    AssignmentTtlSeconds: Joi.number().min(1).default(30).description('Assignments older than this are dropped, not sent'),
    TrafficLog: Joi.boolean().default(true).description('Append every telegram to Service_PLC.log in the service home'),
    TrafficLogMaxBytes: Joi.number().integer().min(4096).default(10485760).description('Rotate Service_PLC.log at this size'),
    TrafficLogFiles: Joi.number().integer().min(1).max(100).default(5).description('Rotated logs kept (Service_PLC.log.1 ...)'),
    TrafficLogMinFreeBytes: Joi.number()
      .integer()
      .min(0)
      .default(104857600)
      .description(
        'The traffic log pauses while its disk has less than this free, leaving the space to the queue database (0: no reserve)',
      ),
    Layout: Joi.string()
      .min(1)
      .default('v1')
      .description(
        "The sorter's telegram layout: a shipped one by name (v1, ewm-mfs, s7-raw) or a layout file, relative to the service home (docs/telegram-layouts.md)",
      ),
  })
    .default()
    .description('The live sorter link'),
  Alarms: Joi.object({
    EvaluateSeconds: Joi.number()
      .min(1)
      .max(5)
      .default(2)
      .description(
        'How often the alarm conditions are looked at (a few reads in memory and of the database, no write unless an alarm changes)',
      ),
    LinkDownSeconds: Joi.number()
      .min(0)
      .max(3600)
      .default(10)
      .description('Live mode: SORTER_LINK_DOWN when the sorter has been disconnected this long; 0 = off'),
    LinkDropsInTenMinutes: Joi.number()
      .integer()
      .min(0)
      .max(1000)
      .default(3)
      .description(
        'Live mode: SORTER_LINK_UNSTABLE when the link, once up, was lost this many times in the last 10 minutes (a link that drops and comes back within LinkDownSeconds never raises SORTER_LINK_DOWN); 0 = off',
      ),
    SorterSilentSeconds: Joi.number()
      .min(0)
      .max(86400)
      .default(300)
      .description(
        'Live mode: SORTER_SILENT when the link is up but no REQUEST, VERIFY or SCAN came for this long (a stopped sorter, a break); 0 = off',
      ),
    WcsPollSeconds: Joi.number()
      .min(0)
      .max(86400)
      .default(60)
      .description('WCS_NOT_POLLING_<QUEUE> when no GET reached that queue for this long and none is waiting; 0 = off'),
    QueueAgeSeconds: Joi.number()
      .min(0)
      .max(86400)
      .default(30)
      .description('Live mode: QUEUE_OLD_<QUEUE> when the oldest message waiting in that queue is older than this; 0 = off'),
    OutboxAgeSeconds: Joi.number()
      .min(0)
      .max(86400)
      .default(10)
      .description(
        "Live mode: OUTBOX_UNACKNOWLEDGED when an assignment or setting has waited this long for the sorter's acknowledgement; 0 = off",
      ),
    StorageStalledSeconds: Joi.number()
      .min(0)
      .max(3600)
      .default(5)
      .description('STORAGE_STALLED when commits have been held up (a lock, the disk) this long; 0 = off (STORAGE_FAILING is always on)'),
    MinFreeDiskBytes: Joi.number()
      .integer()
      .min(0)
      .default(268435456)
      .description("DISK_NEARLY_FULL when the database's file system has less than this free; 0 = off"),
    ClearAfterSeconds: Joi.number()
      .min(0)
      .max(3600)
      .default(10)
      .description(
        'DECISIONS_LATE clears after this long without a new late decision, STORAGE_FAILING after this long without a failed transaction',
      ),
  })
    .default()
    .description('When the alarms are raised (docs/operations.md, "Alarms")'),
}).prefs({ abortEarly: false, convert: false });

/** The key of an ApiKeys entry. */
const keyOf = (entry: unknown) => (typeof entry === 'string' ? entry : (entry as { Key?: unknown }).Key);

/** Raised when config.json cannot be used; `message` lists every problem at once. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validate a parsed config object; throws ConfigError listing every problem. */
export function validateConfig(raw: unknown, file = 'config.json'): Config {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['the file must hold one JSON object']);
  }
  const { value, error } = configSchema.validate(raw);
  if (error)
    throw new ConfigError(
      file,
      error.details.map((d) => d.message),
    );
  return value as Config;
}

/** Read `config.json` from the service home; a missing file means all defaults. */
export function loadConfig(home: string): Config {
  const file = path.join(home, 'config.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return validateConfig({}, file);
    throw new ConfigError(file, [`cannot be read: ${errorMessage(err)}`]);
  }
  let raw: unknown;
  // Editors on Windows save UTF-8 with a byte-order mark; it is not part of the JSON.
  const json = text.replace(/^\uFEFF/, '');
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new ConfigError(file, [`is not valid JSON: ${errorMessage(err)}`]);
  }
  // JSON.parse keeps the last of two equal keys: a second "TestMode" could silently mean live mode.
  const twice = duplicateKeys(json);
  if (twice.length > 0)
    throw new ConfigError(
      file,
      twice.map((d) => `"${d.path ? `${d.path}.` : ''}${d.key}" is given more than once: give it once`),
    );
  const config = validateConfig(raw, file);
  // Test mode empties its database at every start: it must never be the live one.
  if (path.resolve(home, config.TestDatabase) === path.resolve(home, config.Database)) {
    throw new ConfigError(file, [
      `"TestDatabase" must not be the live "Database" (${config.Database}): test mode empties it at every start`,
    ]);
  }
  return config;
}

/** The service home: SORTER_HOME if set, else the given default (the project root). */
export function resolveHome(env: NodeJS.ProcessEnv, fallback: string): string {
  return path.resolve(env.SORTER_HOME && env.SORTER_HOME.length > 0 ? env.SORTER_HOME : fallback);
}

/**
 * Settings left at a default that a site should choose, one line each, logged at start-up: live
 * mode without MaxRequestAgeSeconds, where a WCS back from an outage works through REQUESTs the
 * sorter can no longer use, oldest first, and a busy line stays overloaded after the outage has
 * ended (docs/performance.md, "A WCS that stops").
 */
export function configAdvice(config: Pick<Config, 'TestMode' | 'MaxRequestAgeSeconds'>): string[] {
  if (config.TestMode || config.MaxRequestAgeSeconds > 0) return [];
  return [
    "MaxRequestAgeSeconds is 0: REQUESTs never expire. After a WCS outage a busy line can stay overloaded, every answer too late for its pass; set it to a second less than the sorter's decision window (docs/configuration.md)",
  ];
}

/** The SQLite file this run uses: test mode never touches the live file. */
export function databaseFile(home: string, config: Config): string {
  return path.resolve(home, config.TestMode ? config.TestDatabase : config.Database);
}

/** Why an entry of TrustedProxies is not an address or a CIDR block, or null when it is one. */
export function trustedProxyProblem(entry: string): string | null {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return `"${entry}" is not an IP address or a CIDR block (e.g. 10.0.0.5 or 10.0.0.0/24)`;
  if (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)))
    return `"${entry}" has a prefix length that does not fit its address`;
  return null;
}
