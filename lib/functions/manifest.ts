// manifest.json: the functions, their modules and their triggers (HTTP, schedule, telegram),
// validated.
import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import cron from 'node-cron';
import { projectRoot } from '../process/paths';

/** An HTTP trigger of a function. */
export interface HttpEvent {
  /** `access`: the role a key needs (lib/http/auth.ts); operator when not given. */
  http: { method: 'GET' | 'POST'; path: string; access?: 'wcs' | 'operator' | 'monitor' };
}
/** A schedule trigger of a function (node-cron syntax). */
export interface ScheduleEvent {
  schedule: { cron: string };
}
/** A trigger by data telegrams from the sorter, of these types. */
export interface TelegramEvent {
  telegram: { types: Array<'REQU' | 'VERI' | 'SCAN'> };
}

/** One function of the service: its module (which exports it as fn), fixed input, and triggers. */
export interface FunctionSpec {
  handler: string;
  description: string;
  input?: Record<string, unknown>;
  events: Array<HttpEvent | ScheduleEvent | TelegramEvent>;
}

/** manifest.json: the service's functions by name. */
export interface Manifest {
  service: string;
  description?: string;
  functions: Record<string, FunctionSpec>;
}

const manifestSchema = Joi.object({
  service: Joi.string().required(),
  description: Joi.string(),
  functions: Joi.object()
    .pattern(
      Joi.string(),
      Joi.object({
        handler: Joi.string()
          .pattern(/^handlers\/[\w-]+$/)
          .required(),
        description: Joi.string().required(),
        input: Joi.object(),
        events: Joi.array()
          .min(1)
          .items(
            // One trigger per event; each key says what is wrong with it.
            Joi.object({
              http: Joi.object({
                method: Joi.string().valid('GET', 'POST').required(),
                path: Joi.string().pattern(/^\//).required(),
                access: Joi.string().valid('wcs', 'operator', 'monitor').default('operator'),
              }),
              schedule: Joi.object({
                cron: Joi.string()
                  .required()
                  .custom((v, helpers) => (cron.validate(v) ? v : helpers.error('any.invalid')))
                  .messages({ 'any.invalid': '{{#label}} is not a valid cron expression' }),
              }),
              telegram: Joi.object({
                types: Joi.array()
                  .items(Joi.string().valid('REQU', 'VERI', 'SCAN'))
                  .min(1)
                  .unique()
                  .required(),
              }),
            }).xor('http', 'schedule', 'telegram'),
          )
          .required(),
      }),
    )
    .required(),
}).prefs({ abortEarly: false });

/** The project's manifest.json. */
const defaultManifestFile = path.join(projectRoot, 'manifest.json');

/** Read and validate a manifest; the error lists every problem. */
export function loadManifest(file = defaultManifestFile): Manifest {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { value, error } = manifestSchema.validate(raw);
  if (error) throw new Error(`${file} is invalid:\n${error.details.map((d) => `  - ${d.message}`).join('\n')}`);
  return value as Manifest;
}

/** The HTTP triggers of a manifest, with the function each one runs. */
export function httpTriggers(
  manifest: Manifest,
): Array<{ name: string; fn: FunctionSpec; method: 'GET' | 'POST'; path: string; access?: 'wcs' | 'operator' | 'monitor' }> {
  return Object.entries(manifest.functions).flatMap(([name, fn]) =>
    fn.events.filter((e): e is HttpEvent => 'http' in e).map((e) => ({ name, fn, ...e.http })),
  );
}

/** The schedule triggers of a manifest, with the function each one runs. */
export function scheduleTriggers(manifest: Manifest): Array<{ name: string; fn: FunctionSpec; cron: string }> {
  return Object.entries(manifest.functions).flatMap(([name, fn]) =>
    fn.events.filter((e): e is ScheduleEvent => 'schedule' in e).map((e) => ({ name, fn, cron: e.schedule.cron })),
  );
}

/** The telegram triggers of a manifest, with the function each one runs. */
export function telegramTriggers(manifest: Manifest): Array<{ name: string; fn: FunctionSpec; types: TelegramEvent['telegram']['types'] }> {
  return Object.entries(manifest.functions).flatMap(([name, fn]) =>
    fn.events.filter((e): e is TelegramEvent => 'telegram' in e).map((e) => ({ name, fn, types: e.telegram.types })),
  );
}
