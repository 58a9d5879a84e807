// The OpenAPI document against the service's real responses: every documented route and status
// code is produced for real and validated against /swagger.json with a validator from npm, as a
// client generated from the document would; the document lints clean with Redocly's rules.
// test/e2e/generated-client.test.ts compiles and runs a typed client generated from it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../../db/sqlite';
import OpenAPIResponseValidator from 'openapi-response-validator';
import { databaseFile } from '../../../lib/process/config';
import type { OpenApiDocument } from '../../../lib/http/openapi';
import { csv, requestRow, scanRow, verifyRow } from '../../helpers/home';
import { type TestService, testService } from '../../helpers/service';

type Inject = Awaited<ReturnType<TestService['server']['inject']>>;
type Doc = OpenApiDocument & { components: { schemas: Record<string, Record<string, unknown>> } };
/** Run a test body against a service, closing it whatever happens. */
async function withService(config: object, files: Record<string, string>, body: (t: TestService) => Promise<void>): Promise<void> {
  const t = await testService(config, files);
  try {
    await body(t);
  } finally {
    await t.close();
  }
}
const getDoc = async (t: TestService): Promise<Doc> => JSON.parse((await t.server.inject('/swagger.json')).payload);

/** Each documented (method, path, status) that a real response was checked against. */
const checked = new Set<string>();

/** Validate a real response against its operation in the document; fails on an undocumented status. */
function conforms(doc: Doc, method: string, route: string, res: Inject): void {
  const op = doc.paths[route]?.[method] as { responses: Record<string, { headers?: Record<string, unknown> }> } | undefined;
  expect(op).toBeDefined();
  const documented = Object.keys(op!.responses);
  expect(documented).toContain(String(res.statusCode));
  const validator = new OpenAPIResponseValidator({ responses: op!.responses, components: doc.components } as never);
  const body = res.payload === '' ? undefined : JSON.parse(res.payload);
  const error = validator.validateResponse(res.statusCode, body);
  expect({ route: `${method.toUpperCase()} ${route} ${res.statusCode}`, body, error }).toEqual({
    route: `${method.toUpperCase()} ${route} ${res.statusCode}`,
    body,
    error: undefined,
  });
  for (const header of Object.keys(op!.responses[String(res.statusCode)]?.headers ?? {}))
    expect(res.headers).toHaveProperty(header.toLowerCase());
  checked.add(`${method} ${route} ${res.statusCode}`);
  // A message is also one of the bodies under 2XX, which is what generated clients read.
  const range = op!.responses['2XX'];
  if (range && body !== undefined && res.statusCode >= 200 && res.statusCode < 300) {
    const error = new OpenAPIResponseValidator({
      responses: { [res.statusCode]: range },
      components: doc.components,
    } as never).validateResponse(res.statusCode, body);
    expect({ route: `${method.toUpperCase()} ${route} 2XX`, body, error }).toEqual({
      route: `${method.toUpperCase()} ${route} 2XX`,
      body,
      error: undefined,
    });
    checked.add(`${method} ${route} 2XX`);
  }
}

const replay = csv(
  requestRow('0004711'),
  verifyRow('0004711', 'D017'),
  scanRow('D017'), // BatchDoorStatus null, as every replayed SCAN
  'SCAN,211,D018,,,,,,,,Ready,Flashing,RED,Tour 18,7',
);
const json = { 'content-type': 'application/json' };

describe('every real response conforms to /swagger.json', () => {
  let doc: Doc;

  afterAll(() => {
    // Every route and status code the document names was produced and validated above.
    const all = Object.entries(doc.paths).flatMap(([route, ops]) =>
      Object.entries(ops).flatMap(([method, op]) => Object.keys(op.responses ?? {}).map((code) => `${method} ${route} ${code}`)),
    );
    expect(all.filter((x) => !checked.has(x))).toEqual([]);
  });

  it('test mode: the queues, their errors, the POSTs and /status (replayed SCANs carry BatchDoorStatus null)', async () => {
    await withService({ TestMode: true }, { 'Service_PLC.csv': replay }, async (t) => {
      doc = await getDoc(t);
      for (let i = 0; i < 3; i++) conforms(doc, 'get', '/sortation', await t.server.inject('/sortation?timeOut=0')); // 210, 212, 204
      for (let i = 0; i < 3; i++) conforms(doc, 'get', '/destination', await t.server.inject('/destination?timeOut=0')); // 211 (null door), 211, 204
      for (const route of ['/sortation', '/destination']) {
        conforms(doc, 'get', route, await t.server.inject(`${route}?timeOut=soon`));
        conforms(doc, 'get', route, await t.server.inject(`${route}?timeOut=1&timeOut=2`));
      }
      conforms(
        doc,
        'post',
        '/sortation',
        await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D017', Barcode: null } }),
      );
      conforms(doc, 'post', '/sortation', await t.server.inject({ method: 'POST', url: '/sortation', payload: { Destination: 'D017' } }));
      conforms(
        doc,
        'post',
        '/sortation',
        await t.server.inject({ method: 'POST', url: '/sortation', payload: 'TrackID=1', headers: { 'content-type': 'text/plain' } }),
      );
      conforms(
        doc,
        'post',
        '/sortation',
        await t.server.inject({
          method: 'POST',
          url: '/sortation',
          payload: JSON.stringify({ TrackID: 'x'.repeat(20), Destination: 'D', Pad: 'y'.repeat(20_000) }),
          headers: json,
        }),
      );
      conforms(
        doc,
        'post',
        '/destination',
        await t.server.inject({
          method: 'POST',
          url: '/destination',
          payload: { Destination: 'D017', LightColor: 'purple', BatchDoorStatus: 'opened' },
        }),
      );
      conforms(
        doc,
        'post',
        '/destination',
        await t.server.inject({ method: 'POST', url: '/destination', payload: { DestinationText: 'no destination' } }),
      );
      conforms(
        doc,
        'post',
        '/destination',
        await t.server.inject({ method: 'POST', url: '/destination', payload: '{}', headers: { 'content-type': 'application/xml' } }),
      );
      conforms(
        doc,
        'post',
        '/destination',
        await t.server.inject({
          method: 'POST',
          url: '/destination',
          payload: JSON.stringify({ Destination: 'D', Pad: 'y'.repeat(20_000) }),
          headers: json,
        }),
      );
      conforms(doc, 'get', '/status', await t.server.inject('/status'));
      conforms(doc, 'get', '/health/live', await t.server.inject('/health/live'));
      conforms(doc, 'get', '/health/ready', await t.server.inject('/health/ready')); // test mode: no link needed
      conforms(doc, 'get', '/items/{TrackID}', await t.server.inject('/items/0004711')); // handed out above
      conforms(doc, 'get', '/items/{TrackID}', await t.server.inject('/items/NEVERSEEN'));
    });
  });

  it('dead letters: the listing, sending them back, and their errors', async () => {
    await withService({ TestMode: true }, { 'Service_PLC.csv': replay }, async (t) => {
      const stored = t.service.deps.store.head('sortation', [])!;
      await t.service.writer.run('deadLetter', [
        stored,
        { attempts: 10, clientAddress: '10.0.0.9', lastReturn: 'NoProof', deadAt: new Date().toISOString() },
      ]);
      const listed = await t.server.inject('/dead-letters');
      expect(JSON.parse(listed.payload)).toMatchObject({
        Counts: { 'Sortation Q': 1, 'Destination Q': 0 },
        DeadLetters: [{ Id: 1, MessageId: stored.id, Type: 'REQUEST', Attempts: 10, LastClient: '10.0.0.9' }],
      });
      conforms(doc, 'get', '/dead-letters', listed);
      conforms(doc, 'get', '/dead-letters', await t.server.inject('/dead-letters?queue=elsewhere'));
      conforms(
        doc,
        'post',
        '/dead-letters/requeue',
        await t.server.inject({ method: 'POST', url: '/dead-letters/requeue', payload: { Ids: [1] } }),
      );
      conforms(doc, 'post', '/dead-letters/requeue', await t.server.inject({ method: 'POST', url: '/dead-letters/requeue', payload: {} }));
    });
  });

  it('alarms: the listing with one active, its acknowledgement, and their errors', async () => {
    await withService({ TestMode: true }, { 'Service_PLC.csv': replay }, async (t) => {
      const stored = t.service.deps.store.head('sortation', [])!;
      await t.service.writer.run('deadLetter', [
        stored,
        { attempts: 10, clientAddress: '10.0.0.9', lastReturn: 'NoProof', deadAt: new Date().toISOString() },
      ]);
      t.service.deps.alarms.evaluate();
      const listed = await t.server.inject('/alarms');
      expect(JSON.parse(listed.payload)).toMatchObject({
        Active: [{ Code: 'DEAD_LETTERS', Severity: 'warning' }],
        Journal: [{ Code: 'DEAD_LETTERS' }],
      });
      conforms(doc, 'get', '/alarms', listed);
      conforms(doc, 'get', '/alarms', await t.server.inject('/alarms?days=soon'));
      const id = JSON.parse(listed.payload).Active[0].Id;
      conforms(doc, 'post', `/alarms/{id}/ack`, await t.server.inject({ method: 'POST', url: `/alarms/${id}/ack` }));
      conforms(doc, 'post', `/alarms/{id}/ack`, await t.server.inject({ method: 'POST', url: '/alarms/999/ack' }));
      conforms(doc, 'get', '/status', await t.server.inject('/status'));
    });
  });

  it('live mode: /status with a sorter not reached, POSTs queued, and 503 while an operator holds the write lock', async () => {
    await withService({ TestMode: false, CommitTimeoutMs: 100, Sorter: { Port: 1, ReconnectMaxMs: 200 } }, {}, async (t) => {
      conforms(doc, 'get', '/status', await t.server.inject('/status'));
      const ready = await t.server.inject('/health/ready'); // the sorter is not reached: not ready
      expect(ready.statusCode).toBe(503);
      conforms(doc, 'get', '/health/ready', ready);
      conforms(
        doc,
        'post',
        '/sortation',
        await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D017' } }),
      );
      conforms(
        doc,
        'post',
        '/destination',
        await t.server.inject({ method: 'POST', url: '/destination', payload: { Destination: 'D017', BatchDoorStatus: 'CLOSED' } }),
      );
      const operator = new Database(databaseFile(t.home, t.config));
      operator.exec('BEGIN IMMEDIATE');
      try {
        conforms(
          doc,
          'post',
          '/sortation',
          await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004712', Destination: 'D017' } }),
        );
        conforms(
          doc,
          'post',
          '/destination',
          await t.server.inject({ method: 'POST', url: '/destination', payload: { Destination: 'D018' } }),
        );
        expect(checked).toContain('post /sortation 503');
      } finally {
        operator.exec('ROLLBACK');
        operator.close();
      }
    });
  });

  it('with ApiKeys: 401 on every route, documented as such, and the key scheme in the document', async () => {
    await withService({ TestMode: true, ApiKeys: ['s3cret'] }, {}, async (t) => {
      const secured = await getDoc(t);
      expect(secured.components).toMatchObject({ securitySchemes: { apiKey: { type: 'apiKey', name: 'X-API-Key', in: 'header' } } });
      expect(secured.security).toEqual([{ apiKey: [] }]);
      for (const [method, route] of [
        ['get', '/sortation'],
        ['get', '/destination'],
        ['post', '/sortation'],
        ['post', '/destination'],
        ['get', '/status'],
        ['get', '/health/live'],
        ['get', '/health/ready'],
        ['get', '/items/{TrackID}'],
        ['get', '/dead-letters'],
        ['post', '/dead-letters/requeue'],
      ] as const) {
        conforms(
          secured,
          method,
          route,
          await t.server.inject({
            method: method.toUpperCase(),
            url: route.replace('{TrackID}', '0004711'),
            ...(method === 'post' && { payload: {} }),
          }),
        );
      }
    });
  });

  it('with named keys: 401 and 403 (a key of another role) on every route, as documented', async () => {
    const keys = [
      { Name: 'wcs', Key: 'w', Role: 'wcs' },
      { Name: 'prometheus', Key: 'm', Role: 'monitor' },
    ];
    await withService({ TestMode: true, ApiKeys: keys }, {}, async (t) => {
      const secured = await getDoc(t);
      for (const [method, route] of Object.entries(secured.paths).flatMap(([route, ops]) =>
        Object.keys(ops).map((method) => [method, route] as const),
      )) {
        const url = route.replace('{TrackID}', '0004711').replace('{id}', '1');
        const inject = (key?: string) =>
          t.server.inject({
            method: method.toUpperCase(),
            url,
            headers: key ? { 'x-api-key': key } : {},
            ...(method === 'post' && { payload: {} }),
          });
        conforms(secured, method, route, await inject());
        // The one of the two keys whose role may not call the route.
        const wcsRes = await inject('w');
        conforms(secured, method, route, wcsRes.statusCode === 403 ? wcsRes : await inject('m'));
      }
      expect([...checked].filter((c) => c.endsWith(' 403')).length).toBe(
        Object.values(secured.paths).flatMap((ops) => Object.keys(ops)).length,
      );
    });
  });
});

describe('the document itself', () => {
  let t: TestService;
  beforeAll(async () => (t = await testService({ TestMode: true })));
  afterAll(() => t.close());

  it('names every model after what it is (no Model1, no bare property names for enums)', async () => {
    const names = Object.keys((await getDoc(t)).components.schemas);
    expect(names.filter((n) => /^Model\d*$|^(Type|State|Mode|Delivery|WaitingFor)$/.test(n))).toEqual([]);
    for (const dto of [
      'InductDto',
      'VerifyDto',
      'DestinationInfoDto',
      'AssignmentDto',
      'DestinationSetDto',
      'Status',
      'BatchDoorStatus',
      'LightColor',
    ])
      expect(names).toContain(dto);
  });

  it("gives every error its own example, the route's own", async () => {
    const doc = await getDoc(t);
    const example = (method: string, route: string, code: number) => {
      const ref = (
        doc.paths[route]?.[method]?.responses as
          Record<string, { content: { 'application/json': { schema: { $ref: string } } } }> | undefined
      )?.[String(code)]?.content['application/json'].schema.$ref;
      const schema = doc.components.schemas[ref?.split('/').pop() ?? ''] as
        { properties: Record<string, { example: unknown }> } | undefined;
      return { statusCode: schema?.properties.statusCode?.example, message: schema?.properties.message?.example };
    };
    expect(example('post', '/sortation', 400)).toEqual({ statusCode: 400, message: '"TrackID" is required' });
    expect(example('post', '/destination', 400)).toEqual({ statusCode: 400, message: '"Destination" is required' });
    expect(example('get', '/sortation', 400)).toEqual({ statusCode: 400, message: '"timeOut" must be a number' });
    for (const code of [401, 413, 415, 503]) expect(example('post', '/sortation', code).statusCode).toBe(code);
  });

  it('documents nullable fields as nullable, nullable enums with null among their values, and the range of timeOut', async () => {
    const doc = await getDoc(t);
    expect(doc.components.schemas.BatchDoorStatus).toMatchObject({ nullable: true, enum: ['OPENED', 'CLOSED', null] });
    const status = doc.components.schemas.Status as { properties: Record<string, { nullable?: boolean }> };
    expect(status.properties.OldestMessageAgeSeconds?.nullable).toBe(true);
    const timeOut = doc.paths['/sortation']?.get?.parameters?.find((p) => p.name === 'timeOut');
    expect(timeOut?.schema).toMatchObject({ type: 'number', minimum: 0, maximum: 30 });
  });

  it("documents the message codes again under 2XX, one of the route's bodies, so that generated clients take them for success", async () => {
    const doc = await getDoc(t);
    type Responses = Record<string, { content?: { 'application/json': { schema: Record<string, unknown> } } }>;
    const schemaOf = (route: string, code: string) =>
      (doc.paths[route]?.get?.responses as Responses | undefined)?.[code]?.content?.['application/json'].schema;
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    // The contract's codes stay as they are.
    expect([schemaOf('/sortation', '210'), schemaOf('/sortation', '212'), schemaOf('/destination', '211')]).toEqual([
      ref('InductDto'),
      ref('VerifyDto'),
      ref('DestinationInfoDto'),
    ]);
    expect(schemaOf('/sortation', '2XX')).toEqual({
      oneOf: [ref('InductDto'), ref('VerifyDto')],
      discriminator: { propertyName: 'Type', mapping: { REQUEST: ref('InductDto').$ref, VERIFY: ref('VerifyDto').$ref } },
    });
    expect(schemaOf('/destination', '2XX')).toEqual(ref('DestinationInfoDto'));
  });

  it('marks what the service always sends as required, nullable fields included, and the POST bodies as required', async () => {
    const doc = await getDoc(t);
    type Model = {
      properties?: Record<string, Model & { nullable?: boolean }>;
      required?: string[];
      $ref?: string;
      items?: Model;
      oneOf?: Model[];
      additionalProperties?: Model;
    };
    const models = doc.components.schemas as Record<string, Model>;
    // Every model a response reaches, through properties, items, oneOf and maps.
    const reached = new Set<string>();
    const visit = (m: Model | undefined): void => {
      if (!m) return;
      if (m.$ref) {
        const name = m.$ref.split('/').pop()!;
        if (reached.has(name)) return;
        reached.add(name);
        return visit(models[name]);
      }
      for (const p of Object.values(m.properties ?? {})) visit(p);
      for (const o of m.oneOf ?? []) visit(o);
      visit(m.items);
      if (typeof m.additionalProperties === 'object') visit(m.additionalProperties);
    };
    type Operation = { responses: Record<string, { content?: Record<string, { schema: Model }> }> };
    for (const ops of Object.values(doc.paths))
      for (const op of Object.values(ops) as Operation[])
        for (const r of Object.values(op.responses)) visit(r.content?.['application/json']?.schema);
    expect([...reached]).toEqual(
      expect.arrayContaining([
        'Status',
        'StorageStatus',
        'AssignmentAck',
        'Assignment',
        'DestinationSetAck',
        'DestinationSetting',
        'DefaultApplied',
        'InductDto',
      ]),
    );
    // Optional on purpose: an item event's fields that only some kinds of event have.
    const optional: Record<string, string[]> = {
      ItemEvent: ['RecirculationCount', 'Destination', 'Client', 'Attempt', 'ReadProof', 'Reason'],
    };
    for (const name of reached) {
      const model = models[name];
      expect(model).toBeDefined();
      const notRequired = Object.keys(model!.properties ?? {}).filter((p) => !(model!.required ?? []).includes(p));
      expect({ name, notRequired }).toEqual({ name, notRequired: optional[name] ?? [] });
    }
    // Nullable and present: null says "none", never a missing field.
    expect(models.Status?.properties?.OldestMessageAgeSeconds?.nullable).toBe(true);
    expect(models.Status?.required).toEqual(expect.arrayContaining(['OldestMessageAgeSeconds', 'Replay']));
    expect(models.ReplaySummary).toMatchObject({ nullable: true });
    for (const route of ['/sortation', '/destination']) expect(doc.paths[route]?.post).toMatchObject({ requestBody: { required: true } });
  });

  it('serves the same document at /openapi.json, without a key like /swagger.json, and lists neither in it', async () => {
    const s = await testService({ TestMode: true, ApiKeys: ['k'] });
    try {
      const swagger = await s.server.inject('/swagger.json');
      const openapi = await s.server.inject('/openapi.json');
      expect([swagger.statusCode, openapi.statusCode, openapi.headers['content-type']]).toEqual([
        200,
        200,
        'application/json; charset=utf-8',
      ]);
      expect(JSON.parse(openapi.payload)).toEqual(JSON.parse(swagger.payload));
      expect(Object.keys(JSON.parse(openapi.payload).paths).filter((p) => p.endsWith('.json'))).toEqual([]);
      expect((await s.server.inject('/status')).statusCode).toBe(401);
    } finally {
      await s.close();
    }
  });

  it.each([[false], [true]])(
    'lints clean with Redocly (ApiKeys set: %s)',
    async (keys) => {
      const s = keys ? await testService({ TestMode: true, ApiKeys: ['k'] }) : t;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
      const file = path.join(dir, 'swagger.json');
      fs.writeFileSync(file, (await s.server.inject('/swagger.json')).payload);
      if (keys) await s.close();
      const root = path.resolve(__dirname, '../../..');
      const lint = spawnSync(
        path.join(root, 'node_modules/.bin/redocly'),
        ['lint', file, '--config', path.join(root, 'redocly.yaml'), '--format', 'stylish'],
        {
          encoding: 'utf8',
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
          timeout: 60_000,
        },
      );
      fs.rmSync(dir, { recursive: true, force: true });
      expect({
        status: lint.status,
        problems: (lint.stdout + lint.stderr).split('\n').filter((l) => /error|warning/i.test(l) && !/Node\.js|deprecat/i.test(l)),
      }).toEqual({ status: 0, problems: [] });
    },
    90_000,
  );
});
