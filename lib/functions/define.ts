// How a function of the service is declared: manifest.json names its module, and the module
// exports `fn`, built here from its handler and what its trigger needs (for HTTP: validation,
// documentation and the event mapping), so that the handler's own types are checked once, here;
// and what handlers return: values for every expected outcome, turned into HTTP by
// lib/http/function-routes.ts.
import path from 'node:path';
import type Joi from 'joi';
import type { Claim, GoneWatch } from '../queue/dispatcher';
import type { InboundMessage } from '../link/session-port';
import type { Deps } from '../deps';

/** A handler: `(deps, event) => result`. It may ask for any part of Deps (a narrower type is fine). */
export type Handler<E> = (deps: Deps, event: E) => HandlerResult | Promise<HandlerResult>;

/** A function's fixed input from the manifest (e.g. which queue). */
export type FunctionInput = Record<string, unknown>;

/** What an HTTP trigger hands a binding: the validated request, without hapi. */
export interface HttpRequestView {
  method: string;
  /** Path parameters (validated by the binding's params schema); read them with pathParam. */
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** Request headers, lower-case names (those the binding's headers schema names are validated). */
  headers: Record<string, unknown>;
  payload: unknown;
  clientAddress: string | null;
  /** The name of the API key that called (never the key), or null without ApiKeys. */
  caller?: string | null;
  /** Tells when the client's connection closes before its response is written. */
  gone: GoneWatch;
}

/** A path parameter the binding's params schema requires, so present once the request is validated. */
export function pathParam(request: HttpRequestView, name: string): string {
  const value = request.params[name];
  if (typeof value !== 'string') throw new Error(`path parameter ${name} is missing (the route's params schema requires it)`);
  return value;
}

/**
 * What a handler returns; lib/http/function-routes.ts is the one place that turns these into HTTP.
 * Expected outcomes (an empty queue, a defaulted enum) are values, never exceptions.
 */
export type HandlerResult =
  | { kind: 'ok'; body: object; status?: number }
  | { kind: 'message'; claim: Claim; explicitAck?: boolean }
  | { kind: 'empty' }
  | { kind: 'text'; body: string; contentType: string }
  | { kind: 'unavailable'; reason: string; retryAfterSeconds: number };

/** 200 (or the status given, e.g. a health check's 503) with a JSON body. */
export const ok = (body: object, status = 200): HandlerResult => ({ kind: 'ok', body, status });
/** 204, no body. */
export const empty: HandlerResult = { kind: 'empty' };
/** 503 with Retry-After: the service cannot do it now (e.g. the storage is stalled) and did nothing. */
export const unavailable = (reason: string, retryAfterSeconds = 1): HandlerResult => ({ kind: 'unavailable', reason, retryAfterSeconds });
/** 200 with a text body of its own type (e.g. Prometheus' exposition format). */
export const text = (body: string, contentType: string): HandlerResult => ({ kind: 'text', body, contentType });

/** The event of a POST: its body (validated by the binding's payload schema) and who sent it. */
export const postEvent = <B>(request: HttpRequestView): { body: B; clientAddress: string | null } => ({
  // Validated against the binding's payload schema before any handler runs.
  body: request.payload as B,
  clientAddress: request.clientAddress,
});

/** Documented responses by status code. */
export type Responses = Record<number, { description: string; schema?: Joi.Schema }>;

/** How one function is reached over HTTP: its validation, its documentation, and its event. */
export interface HttpBinding<E> {
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  headers?: Joi.ObjectSchema;
  payload?: Joi.ObjectSchema;
  notes: string[];
  /** Not part of the JSON API's OpenAPI document (e.g. /metrics, which is Prometheus' text). */
  undocumented?: boolean;
  /** Documented responses; may depend on the function's fixed input (which queue). */
  responses(input: FunctionInput): Responses;
  event(request: HttpRequestView, input: FunctionInput): E;
}

/** A function as the server, the scheduler and the sorter link run it, by trigger kind. */
export type FunctionDefinition =
  | {
      kind: 'http';
      binding: Omit<HttpBinding<unknown>, 'event'>;
      invoke(deps: Deps, request: HttpRequestView, input: FunctionInput): HandlerResult | Promise<HandlerResult>;
    }
  | {
      kind: 'schedule';
      invoke(deps: Deps, input: FunctionInput): HandlerResult | Promise<HandlerResult>;
      runsWhen?(deps: Deps): boolean;
      light?: boolean;
    }
  | { kind: 'telegram'; invoke(deps: Deps, event: InboundMessage): HandlerResult | Promise<HandlerResult> };

/** A function triggered by HTTP requests. */
export function httpFunction<E>(handler: Handler<E>, binding: HttpBinding<E>): FunctionDefinition {
  return { kind: 'http', binding, invoke: (deps, request, input) => handler(deps, binding.event(request, input)) };
}

/**
 * A function triggered by a schedule; its event is its fixed input. `runsWhen`: whether the
 * settings give it anything to do; a function they switch off is not scheduled at all, so that
 * its cron does not wake an idle service (every second, for the REQUEST expiry). `light`: a run
 * is a look that takes well under a millisecond (the disk's size every 4 s), so the trigger does
 * not sample the event loop for a second after it, as it does for other runs; the function says
 * itself when it has work (deps.eventLoop.busy()).
 */
export function scheduledFunction<D = Deps>(
  handler: Handler<FunctionInput>,
  runsWhen?: (deps: D) => boolean,
  light?: 'light',
): FunctionDefinition {
  return {
    kind: 'schedule',
    invoke: handler,
    ...(runsWhen && { runsWhen: runsWhen as (deps: Deps) => boolean }),
    ...(light && { light: true }),
  };
}

/** A function triggered by a data telegram from the sorter; it resolves once the message is kept. */
export function telegramFunction(handler: Handler<InboundMessage>): FunctionDefinition {
  return { kind: 'telegram', invoke: handler };
}

const isDefinition = (x: unknown): x is FunctionDefinition =>
  typeof x === 'object' &&
  x !== null &&
  'kind' in x &&
  'invoke' in x &&
  typeof x.invoke === 'function' &&
  ['http', 'schedule', 'telegram'].includes(String(x.kind));

/** The function a manifest names (`handlers/status`): that module's `fn`. */
function load(module: string): FunctionDefinition {
  // Relative to this file, so that it resolves to the compiled module in dist/ and to the source under jest.
  // The module is named by manifest.json at run time: no static import can name it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported: unknown = require(path.join(__dirname, '../..', module)).fn;
  if (!isDefinition(exported)) throw new Error(`manifest.json: ${module} does not export a function definition as fn`);
  return exported;
}

const wrongKind = (module: string, kind: string, trigger: string) =>
  new Error(`manifest.json: ${module} is a ${kind} function, it cannot have a ${trigger} trigger`);

export function loadHttpFunction(module: string) {
  const f = load(module);
  if (f.kind !== 'http') throw wrongKind(module, f.kind, 'http');
  return f;
}

export function loadScheduledFunction(module: string) {
  const f = load(module);
  if (f.kind !== 'schedule') throw wrongKind(module, f.kind, 'schedule');
  return f;
}

/** A function triggered by telegrams, as the sorter link runs it. */
export type TelegramFunction = Extract<FunctionDefinition, { kind: 'telegram' }>;

export function loadTelegramFunction(module: string): TelegramFunction {
  const f = load(module);
  if (f.kind !== 'telegram') throw wrongKind(module, f.kind, 'telegram');
  return f;
}
