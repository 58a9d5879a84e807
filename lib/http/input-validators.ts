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
  const d = schema.describe() as {
    flags?: { unknown?: boolean };
    keys?: Record<string, { flags?: { presence?: string } }>;
    rules?: unknown[];
    dependencies?: unknown[];
  };
  if (d.flags?.unknown !== true || d.rules?.length || d.dependencies?.length) return null;
  const entries = Object.entries(d.keys ?? {});
  if (entries.some(([, k]) => k.flags?.presence === 'required')) return null;
  return entries.map(([name]) => name.toLowerCase());
}

/** A key of a body schema as the fast check sees it: a plain string's rules, or anything at all. */
type KeyRule = { name: string; required: boolean } & (
  { any: true } | { any: false; max: number; patterns: RegExp[]; allowEmpty: boolean; allowNull: boolean }
);

/**
 * A POST body: when every key of the schema plainly meets its rules (a string within its length
 * and patterns, or '' or null where allowed, or absent where optional; anything for a key of any
 * type), joi would accept the body as it is, so it is (a copy, as joi gives); else joi decides,
 * and its errors are exactly those of a joi schema on the route. Joi's own work on every POST
 * cost as much as the rest of the route's validation. A schema with anything the check does not
 * know (another type, a rule, a conversion flag) is left to joi for every request, as is a route
 * with joi options of its own.
 */
export function plainKeysValidator(schema: Joi.ObjectSchema): Validator {
  const rules = plainKeyRules(schema);
  return async (value, options) => {
    if (rules && onlyContext(options) && isPlainObject(value) && rules.every((r) => meets(r, (value as Record<string, unknown>)[r.name])))
      return { ...value };
    return schema.validateAsync(value, options);
  };
}

/** hapi's options carry the request as joi's context; anything more is a route's own joi options. */
const onlyContext = (options: object) => Object.keys(options).every((k) => k === 'context');

const isPlainObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

function meets(rule: KeyRule, v: unknown): boolean {
  if (v === undefined) return !rule.required;
  if (rule.any) return true;
  if (v === null) return rule.allowNull;
  if (typeof v !== 'string') return false;
  if (v === '') return rule.allowEmpty;
  return v.length <= rule.max && rule.patterns.every((p) => p.test(v));
}

/** What joi's describe() says of a schema, as far as the fast check reads it. */
type Described = {
  type: string;
  flags?: Record<string, unknown>;
  rules?: Array<{ name: string; args: Record<string, unknown> }>;
  allow?: unknown[];
  keys?: Record<string, Described>;
  preferences?: unknown;
  dependencies?: unknown[];
  patterns?: unknown[];
  renames?: unknown[];
  invalid?: unknown[];
  whens?: unknown[];
};

/** Only the flags the fast check knows: descriptions, labels, and `extra`. */
const knownFlags = (flags: Record<string, unknown> | undefined, extra: string[]) =>
  Object.keys(flags ?? {}).every((f) => ['description', 'label', ...extra].includes(f));

/** One key's rule, or null if its schema says more than the fast check knows (then joi checks the object). */
function keyRule(name: string, k: Described): KeyRule | null {
  const presence = k.flags?.presence;
  if (
    (presence !== undefined && presence !== 'required' && presence !== 'optional') ||
    !knownFlags(k.flags, ['presence']) ||
    k.invalid ||
    k.whens
  )
    return null;
  const required = presence === 'required';
  if (k.type === 'any') return k.rules?.length || k.allow || k.preferences ? null : { name, required, any: true };
  if (k.type !== 'string' || (k.allow ?? []).some((a) => a !== '' && a !== null)) return null;
  let max = Infinity;
  const patterns: RegExp[] = [];
  for (const r of k.rules ?? []) {
    if (r.name === 'max' && typeof r.args.limit === 'number' && r.args.encoding === undefined) max = r.args.limit;
    else if (r.name === 'pattern' && !(r.args.options as { invert?: boolean } | undefined)?.invert)
      patterns.push(regexOf(r.args.regex as string));
    else return null;
  }
  return { name, required, any: false, max, patterns, allowEmpty: (k.allow ?? []).includes(''), allowNull: (k.allow ?? []).includes(null) };
}

/** The key rules of an object schema that allows unknown keys and has only keys the fast check knows; else null. */
function plainKeyRules(schema: Joi.ObjectSchema): KeyRule[] | null {
  const d = schema.describe() as Described;
  if (
    d.flags?.unknown !== true ||
    !knownFlags(d.flags, ['unknown']) ||
    d.rules?.length ||
    d.dependencies?.length ||
    d.patterns?.length ||
    d.renames?.length ||
    d.preferences ||
    d.allow ||
    d.whens
  )
    return null;
  const rules: KeyRule[] = [];
  for (const [name, k] of Object.entries(d.keys ?? {})) {
    const rule = keyRule(name, k);
    if (!rule) return null;
    rules.push(rule);
  }
  return rules;
}

/** A RegExp from joi's description of it ("/source/flags"). */
function regexOf(described: string): RegExp {
  const end = described.lastIndexOf('/');
  return new RegExp(described.slice(1, end), described.slice(end + 1));
}
