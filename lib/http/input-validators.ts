// hapi validators for the queue GETs' query and headers: joi's answer, without running joi on
// every long poll. hapi runs a route's joi schemas on each request; on the two GETs a WCS repeats
// all day (`?timeOut=10`, the same few headers) that cost more than the rest of the route's work.
// Swagger still documents the joi schemas (the route's plugins.hapi-swagger.validate).
import type Joi from 'joi';

/** What hapi calls for a function validator: the value (for these sources an object), and hapi's options (its context). */
type Validator = (value: object | Buffer | string, options: Joi.ValidationOptions) => Promise<unknown>;

/** The most query strings whose validated values are kept: a WCS sends one or two, a fuzzer many. */
const MEMO_SIZE = 64;

/**
 * The query: a value joi accepted is kept by its entries and given again (a copy) when the same
 * entries come; anything else goes to joi, whose errors are exactly those of a joi schema on the
 * route. Right only for a schema whose result depends on the value alone (no references to the
 * context or to other sources), as `timeOutQuery` is.
 */
export function memoizedValidator(schema: Joi.ObjectSchema): Validator {
  const memo = new Map<string, Record<string, unknown>>();
  return async (value, options) => {
    const key = JSON.stringify(value);
    const known = memo.get(key);
    if (known) return { ...known };
    const validated = (await schema.validateAsync(value, options)) as Record<string, unknown>;
    if (memo.size >= MEMO_SIZE) memo.clear();
    memo.set(key, { ...validated });
    return validated;
  };
}

/**
 * The headers: when none of the schema's keys is among them, joi would accept them as they are
 * (every key of the schema is optional, unknown ones are allowed, no rule spans keys), so they are;
 * else joi decides. A schema that is not so is left to joi for every request.
 */
export function absentKeysValidator(schema: Joi.ObjectSchema): Validator {
  const keys = schemaKeysIfOptional(schema);
  return async (value, options) => {
    if (keys && !keys.some((k) => (value as Record<string, unknown>)[k] !== undefined)) return value;
    return schema.validateAsync(value, options);
  };
}

/** The keys of an object schema (lower case, as Node gives header names) if all are optional and unknown keys are allowed; else null. */
function schemaKeysIfOptional(schema: Joi.ObjectSchema): string[] | null {
  const d = schema.describe() as { flags?: { unknown?: boolean }; keys?: Record<string, { flags?: { presence?: string } }>; rules?: unknown[]; dependencies?: unknown[] };
  if (d.flags?.unknown !== true || d.rules?.length || d.dependencies?.length) return null;
  const entries = Object.entries(d.keys ?? {});
  if (entries.some(([, k]) => k.flags?.presence === 'required')) return null;
  return entries.map(([name]) => name.toLowerCase());
}
