// The OpenAPI document as clients receive it: what hapi-swagger generates from the joi schemas,
// finished where its generator cannot say what the service does (so that a client generated
// from /swagger.json accepts every real response; test/lib/http/openapi.test.ts checks that).
import { BatchDoorStatus, DestinationStatus, LightColor, LightStatus } from '../../model/enums';

/** A JSON Schema object of the document (loosely typed: the document is plain JSON). */
type Schema = {
  [key: string]: unknown;
  $ref?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
};
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
type Content = Record<string, { schema?: Schema }>;
interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Content };
  responses?: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Content }>;
}
/** The parts of an OpenAPI 3.0 document this module touches. */
export interface OpenApiDocument {
  info: Record<string, unknown>;
  servers?: unknown[];
  security?: unknown[];
  components?: { schemas?: Record<string, Schema> };
  paths: Record<string, Record<string, Operation>>;
}

/** The enums of the domain keep a named model of their own; every other enum is written where it is used. */
const DOMAIN_ENUMS = new Map<string, readonly string[]>([
  ['DestinationStatus', DestinationStatus],
  ['LightStatus', LightStatus],
  ['LightColor', LightColor],
  ['BatchDoorStatus', BatchDoorStatus],
]);

/** Response headers of the queue and POST routes, which joi cannot describe. */
const MESSAGE_HEADERS = {
  'X-Message-Id': { description: "The message's id in its queue (for logs and deduplication)", schema: { type: 'integer' } },
  'X-Delivery-Attempt': {
    description:
      'Which delivery of this message this is: 2 or more means an earlier response went out without proof that it was read (a possible duplicate)',
    schema: { type: 'integer', minimum: 1 },
  },
};
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds after which to send the request again', schema: { type: 'integer' } } };

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const isEnumModel = (s: Schema | undefined): s is Schema & { enum: unknown[] } =>
  s !== undefined && Array.isArray(s.enum) && s.type === 'string';
const JSON_MEDIA = 'application/json';

/**
 * The contract's message codes (210, 211, 212) are 2xx codes that generators do not take for
 * success: openapi-fetch (openapi-typescript-helpers' OkStatus) knows only 200-207 and "2XX", so
 * it types their bodies `never`. The route's message bodies are documented once more under
 * "2XX" (one of them, told apart by Type), next to the codes, which stay as the contract has them.
 */
function documentSuccessRange(op: Operation, schemas: Record<string, Schema>): void {
  const responses = op.responses ?? {};
  const codes = Object.keys(responses).filter((code) => /^2\d\d$/.test(code) && Number(code) > 207);
  const bodies = codes
    .map((code) => responses[code]?.content?.[JSON_MEDIA]?.schema)
    .filter((s): s is Schema & { $ref: string } => s?.$ref !== undefined);
  if (bodies.length === 0 || responses['2XX']) return;
  // Each body's Type is a required single-value enum ("REQUEST"): a discriminator tells typed clients (Java, C#) which model to read.
  const typeOf = (s: Schema & { $ref: string }) => {
    const model = schemas[refName(s.$ref)];
    const type = model?.properties?.Type;
    return model?.required?.includes('Type') && type?.enum?.length === 1 ? String(type.enum[0]) : undefined;
  };
  const types = bodies.map(typeOf);
  const [only] = bodies;
  const schema: Schema =
    bodies.length === 1 && only
      ? { $ref: only.$ref }
      : {
          oneOf: bodies.map((s) => ({ $ref: s.$ref })),
          ...(types.every((t) => t !== undefined) && {
            discriminator: { propertyName: 'Type', mapping: Object.fromEntries(bodies.map((s, i) => [types[i], s.$ref])) },
          }),
        };
  responses['2XX'] = {
    description: `A message: the same bodies as ${codes.join(', ')}, for generated clients that take only 200-207 and 2XX for success`,
    headers: MESSAGE_HEADERS,
    content: { [JSON_MEDIA]: { schema } },
  };
}

/** A body whose model has required fields cannot be left out (hapi-swagger does not say so). */
function markBodyRequired(op: Operation, schemas: Record<string, Schema>): void {
  const schema = op.requestBody?.content?.[JSON_MEDIA]?.schema;
  const model = schema?.$ref ? schemas[refName(schema.$ref)] : schema;
  if (op.requestBody && (model?.required?.length ?? 0) > 0) op.requestBody.required = true;
}

/**
 * Finish a generated document, in place:
 * - enums: the domain's keep their name; the others (hapi-swagger names them after the property,
 *   or Model1, Model2... when names collide) are written inline where they are used;
 * - a field that echoes client input is any JSON value (no type);
 * - a nullable enum lists null among its values (OpenAPI 3.0.3: nullable does not widen an enum);
 * - timeOut documents the range the service uses (it clamps anything else into it);
 * - the message codes 210/211/212 are documented again as "2XX", and a body with required
 *   fields is itself required, so that generated clients type both (docs/http-api.md);
 * - response headers; security stated even when there is none; a license; a relative server.
 */
export function finishDocument(doc: OpenApiDocument, options: { security: boolean }): OpenApiDocument {
  const schemas = doc.components?.schemas ?? {};
  const inline = (owner: Schema) => {
    const properties = owner.properties ?? {};
    for (const [key, prop] of Object.entries(properties)) {
      const target = prop.$ref ? schemas[refName(prop.$ref)] : undefined;
      if (prop.$ref && isEnumModel(target) && !DOMAIN_ENUMS.has(refName(prop.$ref))) properties[key] = structuredClone(target);
    }
  };
  for (const schema of Object.values(schemas)) inline(schema);
  const used = JSON.stringify(doc.paths) + JSON.stringify(schemas);
  for (const [name, schema] of Object.entries(schemas)) {
    if (isEnumModel(schema) && !DOMAIN_ENUMS.has(name) && !used.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  }
  for (const [name, values] of DOMAIN_ENUMS) if (schemas[name]) schemas[name].enum = [...values, ...(schemas[name].nullable ? [null] : [])];
  const nullableEnums = (s: Schema) => {
    if (isEnumModel(s) && s.nullable && !s.enum.includes(null)) s.enum.push(null);
    for (const p of Object.values(s.properties ?? {})) nullableEnums(p);
    if (s.items) nullableEnums(s.items);
  };
  for (const schema of Object.values(schemas)) nullableEnums(schema);
  // A field that echoes what a client sent (`.meta({ anyJson: true })`): any JSON value, so no type.
  const anyJson = (s: Schema) => {
    const properties = s.properties ?? {};
    for (const [key, p] of Object.entries(properties)) {
      if ((p['x-meta'] as { anyJson?: boolean } | undefined)?.anyJson) properties[key] = { description: p.description, example: p.example };
      else anyJson(p);
    }
    if (s.items) anyJson(s.items);
  };
  for (const schema of Object.values(schemas)) anyJson(schema);

  for (const operations of Object.values(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const timeOut = op.parameters?.find((p) => p.name === 'timeOut');
      if (timeOut?.schema) Object.assign(timeOut.schema, { minimum: 0, maximum: 30 });
      for (const [code, response] of Object.entries(op.responses ?? {})) {
        if (method === 'get' && ['210', '211', '212'].includes(code)) response.headers = MESSAGE_HEADERS;
        if (method === 'post' && code === '503') response.headers = RETRY_AFTER;
      }
      documentSuccessRange(op, schemas);
      markBodyRequired(op, schemas);
    }
  }
  doc.info.license = { name: 'Proprietary: licensed with the sorter integration service' };
  doc.servers = [{ url: '/', description: 'The service that served this document' }];
  // Without ApiKeys no operation needs credentials; say so rather than leave it undefined.
  if (!options.security) doc.security = [];
  return doc;
}
