import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';

/** Settings from config.json, after validation and defaults. Keys keep the spec's PascalCase. */
export interface Config {
  TestMode: boolean;
  Port: number;
  Host: string;
  DefaultTimeOut: number;
  Database: string;
  TestDatabase: string;
  Synchronous: 'FULL' | 'NORMAL';
  HistoryRetentionDays: number;
  ExternalChangePollMs: number;
  MaxPayloadBytes: number;
  ApiKeys: string[];
  LogLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  Sorter: { Host: string; Port: number };
}

/** Every setting, its default and its one-line meaning; the README table mirrors this. */
export const configSchema = Joi.object<Config>({
  TestMode: Joi.boolean().default(false).description('Replay Service_PLC.csv/.log instead of talking to a sorter'),
  Port: Joi.number().port().default(8081).description('HTTP listening port'),
  Host: Joi.string().default('0.0.0.0').description('HTTP listening address'),
  DefaultTimeOut: Joi.number().min(0).max(30).default(0).description('Long-poll wait in seconds when a GET has no timeOut'),
  Database: Joi.string().default('data/sorter.db').description('Live-mode SQLite file, relative to the service home'),
  TestDatabase: Joi.string().default('data/sorter-test.db').description('Test-mode SQLite file, emptied and re-seeded at each start'),
  Synchronous: Joi.string().valid('FULL', 'NORMAL').default('FULL').description('SQLite synchronous mode: FULL survives a power cut'),
  HistoryRetentionDays: Joi.number().integer().min(0).default(30).description('Days delivered messages stay in the history table'),
  ExternalChangePollMs: Joi.number().integer().min(10).max(5000).default(100).description('How often waiting polls look for rows committed by other processes'),
  MaxPayloadBytes: Joi.number().integer().min(256).max(1048576).default(16384).description('Largest accepted request body (413 beyond)'),
  ApiKeys: Joi.array().items(Joi.string().min(1)).default([]).description('If not empty, every API call needs one of these in X-API-Key'),
  LogLevel: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info').description('Log level (JSON lines on stdout)'),
  Sorter: Joi.object({
    Host: Joi.string().default('127.0.0.1').description('Sorter PLC address'),
    Port: Joi.number().port().default(2000).description('Sorter PLC TCP port'),
  })
    .default()
    .description('The live sorter link'),
}).prefs({ abortEarly: false, convert: false });

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
  if (error) throw new ConfigError(file, error.details.map((d) => d.message));
  return value as Config;
}

/** Read `config.json` from the service home; a missing file means all defaults. */
export function loadConfig(home: string): Config {
  const file = path.join(home, 'config.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return validateConfig({}, file);
    throw new ConfigError(file, [`cannot be read: ${(err as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, [`is not valid JSON: ${(err as Error).message}`]);
  }
  return validateConfig(raw, file);
}

/** The service home: SORTER_HOME if set, else the given default (the project root). */
export function resolveHome(env: NodeJS.ProcessEnv, fallback: string): string {
  return path.resolve(env.SORTER_HOME && env.SORTER_HOME.length > 0 ? env.SORTER_HOME : fallback);
}

/** The SQLite file this run uses: test mode never touches the live file. */
export function databaseFile(home: string, config: Config): string {
  return path.resolve(home, config.TestMode ? config.TestDatabase : config.Database);
}
