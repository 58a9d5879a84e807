import type { Claim } from './dispatcher';

/**
 * What a handler returns; lib/http.ts is the one place that turns these into HTTP.
 * Expected outcomes (an empty queue, a defaulted enum) are values, never exceptions.
 */
export type HandlerResult =
  | { kind: 'ok'; body: object }
  | { kind: 'message'; claim: Claim }
  | { kind: 'empty' };

/** 200 with a JSON body. */
export const ok = (body: object): HandlerResult => ({ kind: 'ok', body });
/** 204, no body. */
export const empty: HandlerResult = { kind: 'empty' };
