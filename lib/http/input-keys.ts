// Input keys as clients spell them: bound case-insensitively to the schema's spelling, a field
// given twice refused, and validation errors that say which field is wrong.
import Boom from '@hapi/boom';
import Bourne from '@hapi/bourne';
import type { Lifecycle } from '@hapi/hapi';
import type Joi from 'joi';
import { duplicateKeys } from '../process/json-keys';

/** Validation errors become 400s that say which field is wrong (hapi hides the detail by default). */
export const validationFailAction: Lifecycle.Method = (_request, _h, err) => {
  throw err ?? Boom.badRequest();
};

/** The key names a schema declares, for case-insensitive binding. */
export function schemaKeys(schema: Joi.ObjectSchema | undefined): string[] {
  const keys = schema?.describe().keys;
  return keys ? Object.keys(keys) : [];
}

/** A schema's key names, exact and by their lower case: made once per list (a route's), not per request. */
interface KeyIndex {
  exact: ReadonlySet<string>;
  byLower: ReadonlyMap<string, string>;
}
const indexes = new WeakMap<string[], KeyIndex>();
function keyIndex(keys: string[]): KeyIndex {
  let index = indexes.get(keys);
  if (!index) {
    index = { exact: new Set(keys), byLower: new Map(keys.map((k) => [k.toLowerCase(), k])) };
    indexes.set(keys, index);
  }
  return index;
}

/**
 * Rename input keys to the schema's spelling when they match case-insensitively
 * (`trackId` -> `TrackID`). Two spellings of one field is an error naming both. Input whose keys
 * are all spelled as the schema spells them (what nearly every request sends) is returned as it is.
 */
export function canonicalKeys(input: unknown, keys: string[], source: string): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || keys.length === 0) return input;
  const { exact, byLower } = keyIndex(keys);
  let asSpelled = true;
  for (const key in input) {
    if (Object.hasOwn(input, key) && !exact.has(key)) {
      asSpelled = false;
      break;
    }
  }
  if (asSpelled) return input;
  const out: Record<string, unknown> = {};
  const seen = new Map<string, string>();
  for (const [key, value] of Object.entries(input)) {
    const canonical = byLower.get(key.toLowerCase()) ?? key;
    const earlier = seen.get(canonical);
    if (earlier !== undefined) {
      throw Boom.badRequest(`"${canonical}" is given twice in the ${source} (as "${earlier}" and "${key}")`);
    }
    seen.set(canonical, key);
    out[canonical] = value;
  }
  return out;
}

/** 400 when a field of the body stands twice under the same spelling (JSON.parse would keep the last). */
export function refuseRepeatedKeys(json: string, keys: string[]): void {
  const known = keyIndex(keys).byLower;
  const twice = duplicateKeys(json).find((d) => d.path === '' && known.has(d.key.toLowerCase()));
  if (twice)
    throw Boom.badRequest(`"${known.get(twice.key.toLowerCase())}" is given twice in the body (as "${twice.key}" and "${twice.key}")`);
}

/**
 * A JSON body's text as hapi parses it (@hapi/subtext): empty is null, a "__proto__" key is dropped
 * like any other unknown field (hapi's default calls it invalid JSON), and anything else that is
 * not JSON is 400 "Invalid request payload JSON format".
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return Bourne.parse(text, { protoAction: 'remove' });
  } catch (err) {
    throw Boom.badRequest('Invalid request payload JSON format', err);
  }
}
