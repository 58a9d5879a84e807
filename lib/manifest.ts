import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import cron from 'node-cron';
import { projectRoot } from './paths';

/** An HTTP trigger of a function. */
export interface HttpEvent {
  http: { method: 'GET' | 'POST'; path: string };
}
/** A schedule trigger of a function (node-cron syntax). */
export interface ScheduleEvent {
  schedule: { cron: string };
}

/** One function of the service: its handler, fixed input, and triggers. */
export interface FunctionSpec {
  handler: string;
  description: string;
  input?: Record<string, unknown>;
  events: Array<HttpEvent | ScheduleEvent>;
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
        handler: Joi.string().pattern(/^handlers\/[\w-]+\.\w+$/).required(),
        description: Joi.string().required(),
        input: Joi.object(),
        events: Joi.array()
          .min(1)
          .items(
            Joi.object({ http: Joi.object({ method: Joi.string().valid('GET', 'POST').required(), path: Joi.string().pattern(/^\//).required() }).required() }),
            Joi.object({
              schedule: Joi.object({
                cron: Joi.string()
                  .required()
                  .custom((v, helpers) => (cron.validate(v) ? v : helpers.error('any.invalid')))
                  .messages({ 'any.invalid': '{{#label}} is not a valid cron expression' }),
              }).required(),
            }),
          )
          .required(),
      }),
    )
    .required(),
}).prefs({ abortEarly: false });

/** The project's manifest.json. */
export const defaultManifestFile = path.join(projectRoot, 'manifest.json');

/** Read and validate a manifest; the error lists every problem. */
export function loadManifest(file = defaultManifestFile): Manifest {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { value, error } = manifestSchema.validate(raw);
  if (error) throw new Error(`${file} is invalid:\n${error.details.map((d) => `  - ${d.message}`).join('\n')}`);
  return value as Manifest;
}

/** The HTTP triggers of a manifest, with the function each one runs. */
export function httpTriggers(manifest: Manifest): Array<{ name: string; fn: FunctionSpec; method: 'GET' | 'POST'; path: string }> {
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
