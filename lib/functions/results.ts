// What handlers return: values for every expected outcome, turned into HTTP by lib/http/reply.ts.
import type { Claim } from '../queue/dispatcher';

/**
 * What a handler returns; lib/http/reply.ts is the one place that turns these into HTTP.
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
