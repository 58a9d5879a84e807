// The HTTP contract through server.inject: status codes, DTOs, errors, Swagger, authentication.
import zlib from 'node:zlib';
import { statusDto } from '../../lib/http/ops-schemas';
import { csv, requestRow, scanRow, verifyRow } from '../helpers/home';
import { type TestService, testService } from '../helpers/service';

const replay = csv(
  'REQUEST,210,IND02,0004711,00012345678901234567,320.5,210,95,1.25,2,,,,,',
  verifyRow('0004711', 'D017'),
  'SCAN,211,D017,,,,,,,,NotReady,Solid,BLUE,Tour 17,NONE',
);

describe('HTTP contract in test mode (spec sections 2-4)', () => {
  let t: TestService;
  beforeEach(async () => (t = await testService({ TestMode: true }, { 'Service_PLC.csv': replay })));
  afterEach(() => t.close());

  it('GET /sortation returns a REQUEST with 210 and the exact InductDto fields and JSON types', async () => {
    const res = await t.server.inject('/sortation?timeOut=0');
    expect(res.statusCode).toBe(210);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.payload)).toStrictEqual({
      Type: 'REQUEST',
      TrackID: '0004711',
      Barcode: '00012345678901234567',
      MessageCode: 210,
      InductLocation: 'IND02',
      RecirculationCount: 2,
      Length: 320.5,
      Width: 210,
      Height: 95,
      Weight: 1.25,
    });
  });

  it('GET /sortation then returns the VERIFY with 212, then 204 with no body and no JSON type', async () => {
    await t.server.inject('/sortation');
    const verify = await t.server.inject('/sortation');
    expect(verify.statusCode).toBe(212);
    expect(JSON.parse(verify.payload)).toStrictEqual({
      Type: 'VERIFY',
      TrackID: '0004711',
      Barcode: 'BC0004711',
      Destination: 'D017',
      MessageCode: 212,
    });
    const empty = await t.server.inject('/sortation?timeOut=0');
    expect(empty.statusCode).toBe(204);
    expect(empty.payload).toBe('');
    expect(empty.headers['content-type']).toBeUndefined();
  });

  it('GET /destination returns a SCAN with 211 and the exact DestinationInfoDto, then 204', async () => {
    const res = await t.server.inject('/destination?timeOut=0');
    expect(res.statusCode).toBe(211);
    expect(JSON.parse(res.payload)).toStrictEqual({
      Type: 'SCAN',
      Destination: 'D017',
      DestinationStatus: 'NotReady',
      DestinationText: 'Tour 17',
      LightStatus: 'Solid',
      LightColor: 'BLUE',
      ButtonID: 0,
      MessageCode: 211,
      BatchDoorStatus: null,
    });
    expect((await t.server.inject('/destination?timeOut=0')).statusCode).toBe(204);
  });

  it('returns one message per call and removes it once delivered, recording the delivery', async () => {
    const res = await t.server.inject('/sortation');
    await t.settled();
    expect(t.service.deps.store.depth('sortation')).toBe(1);
    const row = t.service.db.prepare('SELECT type, track_id, client_address, attempt, read_proof FROM delivered_history').get();
    expect(row).toEqual({ type: 'REQUEST', track_id: '0004711', client_address: '127.0.0.1', attempt: 1, read_proof: 'Injected' });
    // The body it received, byte for byte, for an operator with sqlite3.
    expect(t.service.db.prepare('SELECT body FROM delivered_messages').pluck().get()).toBe(res.payload);
    const status = JSON.parse((await t.server.inject('/status')).payload);
    expect(status.Delivery).toMatchObject({ Mode: 'AtLeastOnce', AwaitingProof: 0, Confirmed: { Injected: 1 }, Redelivered: 0 });
  });

  it('names the message and its delivery attempt in headers, for clients that deduplicate', async () => {
    const res = await t.server.inject('/sortation?timeOut=0');
    expect(res.headers).toMatchObject({ 'x-message-id': '1', 'x-delivery-attempt': '1' });
  });

  it('HEAD on a queue path answers 204 at once and takes nothing, whatever the timeOut', async () => {
    for (const url of ['/sortation?timeOut=0', '/sortation?timeOut=10', '/destination?timeOut=10']) {
      const res = await t.server.inject({ method: 'HEAD', url });
      expect([res.statusCode, res.payload]).toEqual([204, '']);
    }
    await t.settled();
    expect(JSON.parse((await t.server.inject('/status')).payload)).toMatchObject({ 'Sortation Q': 2, 'Destination Q': 1 });
    expect(t.service.db.prepare('SELECT count(*) FROM delivered_history').pluck().get()).toBe(0);
  });

  it('GET /status has the numeric counters "Sortation Q" and "Destination Q", test mode and replay counts', async () => {
    const res = await t.server.inject('/status');
    expect(res.statusCode).toBe(200);
    const body = JSON.parse(res.payload);
    expect(body['Sortation Q']).toBe(2);
    expect(body['Destination Q']).toBe(1);
    expect(body).toMatchObject({
      TestMode: true,
      State: 'Running',
      Replay: { File: 'Service_PLC.csv', RowsLoaded: 3, RowsSkipped: 0, Error: null },
    });
    expect(typeof body.OldestMessageAgeSeconds).toBe('number');
    expect(body.Sorter.Connected).toBe(false);
    // What it answers is what it documents: every field in the schema Swagger is built from.
    const { error } = statusDto.validate(body, { presence: 'required', allowUnknown: false });
    expect(error?.message).toBeUndefined();
    expect(body.Storage).toMatchObject({ State: 'Ok', WaitingFor: null, ReadOnly: false, LastError: null });
    // The replayed REQUESTs were loaded, not timed from a telegram.
    expect(body.DecisionLatency).toEqual({ P50Ms: null, P99Ms: null, Samples: 0, Awaiting: 0, Late: 0 });
  });

  it('compresses an answer over 1 KB for a client that accepts gzip (/status), never a message (written whole, as it is)', async () => {
    const status = await t.server.inject({ url: '/status', headers: { 'accept-encoding': 'gzip' } });
    expect([status.statusCode, status.headers['content-encoding']]).toEqual([200, 'gzip']);
    expect(JSON.parse(zlib.gunzipSync(status.rawPayload).toString())).toMatchObject({ 'Sortation Q': 2, TestMode: true });
    const plain = await t.server.inject('/status');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const message = await t.server.inject({ url: '/sortation?timeOut=0', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect([message.statusCode, message.headers['content-encoding']]).toEqual([210, undefined]);
    expect(Number(message.headers['content-length'])).toBe(message.rawPayload.length);
    expect(JSON.parse(message.payload)).toMatchObject({ Type: 'REQUEST', TrackID: '0004711' });
  });

  it('POST bodies: null in an optional field means omitted, on both endpoints (as .NET and Java serializers send it)', async () => {
    const a = await t.server.inject({
      method: 'POST',
      url: '/sortation',
      payload: { TrackID: '0004711', Destination: 'D017', Barcode: null, Type: null },
    });
    expect(a.statusCode).toBe(200);
    expect(JSON.parse(a.payload).Message).toEqual({ TrackID: '0004711', Destination: 'D017', Barcode: '' });
    const d = await t.server.inject({
      method: 'POST',
      url: '/destination',
      payload: { Destination: 'D017', DestinationText: null, BatchDoorStatus: null, LightStatus: null, Type: null },
    });
    expect(d.statusCode).toBe(200);
    expect(JSON.parse(d.payload).Message).toMatchObject({ Destination: 'D017', DestinationText: '', BatchDoorStatus: null });
    // A "__proto__" key is an unknown field like any other: ignored, not "invalid JSON".
    const proto = await t.server.inject({
      method: 'POST',
      url: '/sortation',
      payload: '{"__proto__": {"polluted": 1}, "TrackID": "0004711", "Destination": "D017"}',
      headers: { 'content-type': 'application/json' },
    });
    expect([proto.statusCode, JSON.parse(proto.payload).Message]).toEqual([200, { TrackID: '0004711', Destination: 'D017', Barcode: '' }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Required fields stay required: null is not a value for them.
    expect((await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: null, Destination: 'D017' } })).statusCode).toBe(
      400,
    );
  });

  it('POST /sortation answers 200 with an acknowledgement and sends nothing in test mode', async () => {
    const res = await t.server.inject({
      method: 'POST',
      url: '/sortation',
      payload: { TrackID: '0004711', Destination: 'D017', Barcode: '00012345678901234567' },
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toEqual({
      Accepted: true,
      Delivery: 'NotSent',
      OutboxID: null,
      Message: { TrackID: '0004711', Destination: 'D017', Barcode: '00012345678901234567' },
      DefaultsApplied: [],
    });
    expect(t.service.deps.outbox.depth()).toBe(0);
  });

  it('POST /destination answers 200, canonicalising enums case-insensitively', async () => {
    const res = await t.server.inject({
      method: 'POST',
      url: '/destination',
      payload: { Destination: 'D017', DestinationStatus: 'ready', LightStatus: 'solid', LightColor: 'Blue', DestinationText: 'Tour 4' },
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toMatchObject({
      Delivery: 'NotSent',
      Message: { DestinationStatus: 'Ready', LightStatus: 'Solid', LightColor: 'BLUE', DestinationText: 'Tour 4' },
      DefaultsApplied: [],
    });
  });

  it('POST /destination: enum values that do not parse take NotReady/Off/Off and are not an error', async () => {
    const res = await t.server.inject({
      method: 'POST',
      url: '/destination',
      payload: { Destination: 'D017', DestinationStatus: 'Full', LightStatus: 'blinking', LightColor: 'purple', DestinationText: '' },
    });
    expect(res.statusCode).toBe(200);
    const body = JSON.parse(res.payload);
    expect(body.Message).toEqual({
      Destination: 'D017',
      DestinationStatus: 'NotReady',
      DestinationText: '',
      LightStatus: 'Off',
      LightColor: 'Off',
      BatchDoorStatus: null,
    });
    expect(body.DefaultsApplied.map((d: { Field: string }) => d.Field)).toEqual(['DestinationStatus', 'LightStatus', 'LightColor']);
  });
});

describe('timeOut (docs/http-api.md)', () => {
  let t: TestService;
  afterEach(() => t.close());

  it('400 with a JSON error naming timeOut when it is not a number', async () => {
    t = await testService({ TestMode: true });
    const res = await t.server.inject('/sortation?timeOut=soon');
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.payload)).toMatchObject({ statusCode: 400, error: 'Bad Request', message: '"timeOut" must be a number' });
    expect((await t.server.inject('/destination?timeOut=')).statusCode).toBe(400);
    const twice = await t.server.inject('/sortation?timeOut=1&timeOut=2');
    expect(JSON.parse(twice.payload)).toMatchObject({ statusCode: 400, message: '"timeOut" is given more than once: give it once' });
  });

  it('takes any number, however large or small, and clamps it: 1e25 waits the maximum, 1e-400 is 0', async () => {
    t = await testService({ TestMode: true });
    const started = Date.now();
    expect((await t.server.inject('/sortation?timeOut=1e-400')).statusCode).toBe(204);
    expect(Date.now() - started).toBeLessThan(500);
    // 1e25: a valid long poll (clamped to 30 s); answered at once here because a message is published.
    const poll = t.server.inject('/sortation?timeOut=1e25');
    await new Promise((r) => setTimeout(r, 100));
    await t.publish([{ Type: 'VERIFY', TrackID: '1', Barcode: '', Destination: 'D1', MessageCode: 212 }]);
    expect((await poll).statusCode).toBe(212);
  });

  it('treats negative values as 0 (immediate) and binds the name case-insensitively', async () => {
    t = await testService({ TestMode: true });
    const started = Date.now();
    expect((await t.server.inject('/sortation?timeOut=-5')).statusCode).toBe(204);
    expect((await t.server.inject('/destination?timeout=-1')).statusCode).toBe(204);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('truncates fractions to whole seconds: timeOut=1.9 waits 1 s', async () => {
    t = await testService({ TestMode: true });
    const started = Date.now();
    expect((await t.server.inject('/sortation?timeOut=1.9')).statusCode).toBe(204);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(1700);
  });

  it('clamps to 30 s: timeOut=600 still returns a message that arrives during the wait', async () => {
    t = await testService({ TestMode: true });
    const pending = t.server.inject('/sortation?timeOut=600');
    await new Promise((r) => setTimeout(r, 50));
    await t.publish([{ Type: 'VERIFY', TrackID: '1', Barcode: '', Destination: 'D1', MessageCode: 212 }]);
    expect((await pending).statusCode).toBe(212);
  });

  it('uses DefaultTimeOut when timeOut is omitted', async () => {
    t = await testService({ TestMode: true, DefaultTimeOut: 1 });
    const started = Date.now();
    expect((await t.server.inject('/destination')).statusCode).toBe(204);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('wakes a waiting poll as soon as a message is committed', async () => {
    t = await testService({ TestMode: true });
    const pending = t.server.inject('/destination?timeOut=10');
    await new Promise((r) => setTimeout(r, 50));
    expect(t.service.deps.dispatchers.destination.waiting).toBe(1);
    const started = Date.now();
    await t.publish([
      {
        Type: 'SCAN',
        Destination: 'D1',
        DestinationStatus: 'Ready',
        DestinationText: '',
        LightStatus: 'Off',
        LightColor: 'Off',
        ButtonID: 0,
        MessageCode: 211,
        BatchDoorStatus: null,
      },
    ]);
    const res = await pending;
    expect(res.statusCode).toBe(211);
    expect(Date.now() - started).toBeLessThan(500);
  });
});

describe('errors (docs/http-api.md, "Errors")', () => {
  let t: TestService;
  beforeAll(
    async () =>
      (t = await testService({ TestMode: true, MaxPayloadBytes: 1024 }, { 'Service_PLC.csv': csv(requestRow('1'), scanRow('D1')) })),
  );
  afterAll(() => t.close());

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.server.inject({
      method: 'POST',
      url,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      headers: { 'content-type': 'application/json', ...headers },
    });

  it.each([
    [{ Destination: 'D1' }, '"TrackID" is required'],
    [{ TrackID: '1' }, '"Destination" is required'],
    [{ TrackID: '', Destination: 'D1' }, '"TrackID" is not allowed to be empty'],
    [{ TrackID: '1', Destination: '' }, '"Destination" is not allowed to be empty'],
    [{ TrackID: 4711, Destination: 'D1' }, '"TrackID" must be a string'],
    [{ TrackID: '1', Destination: 'D-THIRTEEN-CH' }, '"Destination" must be at most 12 characters'],
    [{ TrackID: 'Größe', Destination: 'D1' }, '"TrackID" must be printable ASCII'],
  ])('POST /sortation %j -> 400 %s', async (body, message) => {
    const res = await post('/sortation', body);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.payload).message).toContain(message);
  });

  it('POST /destination without Destination -> 400 naming it; too long text -> 400 naming it', async () => {
    expect(JSON.parse((await post('/destination', { LightColor: 'BLUE' })).payload).message).toBe('"Destination" is required');
    const long = await post('/destination', { Destination: 'D1', DestinationText: 'x'.repeat(41) });
    expect(long.statusCode).toBe(400);
    expect(JSON.parse(long.payload).message).toContain('"DestinationText" must be at most 40 characters');
  });

  it('binds field names case-insensitively, ignores unknown fields, and answers with the exact names', async () => {
    const res = await post('/sortation', { trackid: '0004711', DESTINATION: 'D1', barcode: 'B', Comment: 'ignored', Type: 'ASSIGN' });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload).Message).toEqual({ TrackID: '0004711', Destination: 'D1', Barcode: 'B' });
  });

  it('400 when one field is given twice under two spellings', async () => {
    const res = await post('/sortation', { TrackID: '1', trackId: '2', Destination: 'D1' });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.payload).message).toMatch(/"TrackID" is given twice/);
  });

  it('400 when one field is given twice under the same spelling, as under two (JSON.parse would keep the last)', async () => {
    const raw = (url: string, payload: string) =>
      t.server.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
    const res = await raw('/sortation', '{"TrackID":"1","Destination":"D1","TrackID":"2"}');
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.payload).message).toBe('"TrackID" is given twice in the body (as "TrackID" and "TrackID")');
    expect((await raw('/destination', '{"Destination":"D1","LightColor":"RED","LightColor":"BLUE"}')).statusCode).toBe(400);
    // Unknown fields are ignored, repeated or not; a key inside a value is not a key of the body.
    expect((await raw('/sortation', '{"TrackID":"1","Destination":"D1","Note":"a","Note":"b","X":{"TrackID":1}}')).statusCode).toBe(200);
  });

  it('reads a gzipped body like any other, the check for a field given twice included', async () => {
    const gz = (url: string, json: string) =>
      t.server.inject({
        method: 'POST',
        url,
        payload: zlib.gzipSync(json),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
    const ok = await gz('/sortation', '{"trackId":"0004711","Destination":"D017"}');
    expect([ok.statusCode, JSON.parse(ok.payload).Message]).toEqual([200, { TrackID: '0004711', Destination: 'D017', Barcode: '' }]);
    const twice = await gz('/sortation', '{"TrackID":"1","Destination":"D1","TrackID":"2"}');
    expect([twice.statusCode, JSON.parse(twice.payload).message]).toEqual([
      400,
      '"TrackID" is given twice in the body (as "TrackID" and "TrackID")',
    ]);
    const empty = await t.server.inject({
      method: 'POST',
      url: '/sortation',
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    expect([empty.statusCode, JSON.parse(empty.payload).message]).toEqual([400, '"AssignmentDto" must be of type object']);
  });

  it('400 for malformed JSON, 415 for another content type, 413 for an oversized body', async () => {
    const malformed = await post('/sortation', '{"TrackID": ');
    expect([malformed.statusCode, JSON.parse(malformed.payload).message]).toEqual([400, 'Invalid request payload JSON format']);
    const text = await t.server.inject({
      method: 'POST',
      url: '/sortation',
      payload: 'TrackID=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).toBe(415);
    const big = await post('/destination', { Destination: 'D1', Padding: 'x'.repeat(2000) });
    expect(big.statusCode).toBe(413);
    expect(JSON.parse(big.payload)).toMatchObject({ statusCode: 413, error: 'Request Entity Too Large' });
  });

  it('404 JSON for an unknown path, and no message is lost by any of these errors', async () => {
    const res = await t.server.inject('/sortations');
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.payload)).toMatchObject({ statusCode: 404, error: 'Not Found' });
    expect(t.service.deps.store.depth('sortation')).toBe(1);
    expect(t.service.deps.store.depth('destination')).toBe(1);
  });

  it('405 JSON with Allow for another method on a path we serve, and it takes nothing', async () => {
    for (const [method, url, allow] of [
      ['DELETE', '/sortation', 'GET, HEAD, POST'],
      ['PUT', '/destination', 'GET, HEAD, POST'],
      ['POST', '/status', 'GET, HEAD'],
      ['PATCH', '/sortation', 'GET, HEAD, POST'],
    ] as const) {
      const res = await t.server.inject({ method, url });
      expect([method, url, res.statusCode, res.headers.allow]).toEqual([method, url, 405, allow]);
      expect(JSON.parse(res.payload)).toMatchObject({ statusCode: 405, error: 'Method Not Allowed' });
    }
    expect(t.service.deps.store.depth('sortation')).toBe(1);
  });
});

describe('live mode without a sorter connection', () => {
  it('writes POSTs to the outbox, says Queued, and /status says the sorter is not connected', async () => {
    const t = await testService({ TestMode: false, Sorter: { Host: '127.0.0.1', Port: 4000 } });
    const a = await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D1' } });
    expect(JSON.parse(a.payload)).toMatchObject({ Accepted: true, Delivery: 'Queued', OutboxID: 1 });
    const d = await t.server.inject({ method: 'POST', url: '/destination', payload: { Destination: 'D1', LightColor: 'red' } });
    expect(JSON.parse(d.payload)).toMatchObject({
      Delivery: 'Queued',
      OutboxID: 2,
      Message: { LightColor: 'RED', DestinationStatus: 'NotReady' },
    });
    const rows = t.service.db.prepare('SELECT kind, track_id, destination, light_color, client_address FROM outbox ORDER BY id').all();
    expect(rows).toEqual([
      { kind: 'ASSIGNMENT', track_id: '0004711', destination: 'D1', light_color: null, client_address: '127.0.0.1' },
      { kind: 'DESTINATION', track_id: null, destination: 'D1', light_color: 'RED', client_address: '127.0.0.1' },
    ]);
    const status = JSON.parse((await t.server.inject('/status')).payload);
    expect(status).toMatchObject({
      TestMode: false,
      Sorter: { Connected: false, Address: '127.0.0.1:4000' },
      Outbox: { Depth: 2 },
      Replay: null,
    });
    await t.close();
  });
});

describe('API keys (off by default)', () => {
  it('needs X-API-Key on every endpoint except the documentation when ApiKeys is set', async () => {
    const t = await testService({ TestMode: true, ApiKeys: ['s3cret', 'other'] });
    expect((await t.server.inject('/status')).statusCode).toBe(401);
    const wrong = await t.server.inject({ url: '/sortation', headers: { 'x-api-key': 'nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(JSON.parse(wrong.payload)).toMatchObject({ statusCode: 401, message: 'wrong X-API-Key' });
    expect((await t.server.inject({ url: '/status', headers: { 'x-api-key': 'other' } })).statusCode).toBe(200);
    // Prometheus sends the key as a bearer token; /metrics is behind the keys like the rest.
    expect((await t.server.inject({ url: '/metrics', headers: { authorization: 'Bearer other' } })).statusCode).toBe(200);
    expect((await t.server.inject({ url: '/metrics', headers: { authorization: 'Bearer nope' } })).statusCode).toBe(401);
    expect((await t.server.inject('/metrics')).statusCode).toBe(401);
    expect(
      (
        await t.server.inject({
          method: 'POST',
          url: '/sortation',
          payload: { TrackID: '1', Destination: 'D' },
          headers: { 'X-API-Key': 's3cret' },
        })
      ).statusCode,
    ).toBe(200);
    expect((await t.server.inject('/')).statusCode).toBe(200);
    const doc = JSON.parse((await t.server.inject('/swagger.json')).payload);
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', name: 'X-API-Key', in: 'header' });
    await t.close();
  });

  it('is off when ApiKeys is empty', async () => {
    const t = await testService({ TestMode: true });
    expect((await t.server.inject('/status')).statusCode).toBe(200);
    await t.close();
  });
});

describe('Swagger', () => {
  it('serves the UI at / and documents every route with its status codes and DTOs at /swagger.json (OpenAPI 3.0)', async () => {
    const t = await testService({ TestMode: true });
    const ui = await t.server.inject('/');
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
    expect(ui.payload).toMatch(/swagger/i);
    const doc = JSON.parse((await t.server.inject('/swagger.json')).payload);
    expect(doc.openapi).toBe('3.0.0');
    // 2XX: the message bodies once more, for generated clients (test/lib/http/openapi.test.ts).
    expect(Object.keys(doc.paths['/sortation'].get.responses).sort()).toEqual(['204', '210', '212', '2XX', '400', '401', '403']);
    expect(Object.keys(doc.paths['/destination'].get.responses).sort()).toEqual(['204', '211', '2XX', '400', '401', '403']);
    expect(Object.keys(doc.paths['/sortation'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '413', '415']));
    expect(Object.keys(doc.paths['/status'].get.responses)).toContain('200');
    for (const dto of ['InductDto', 'VerifyDto', 'DestinationInfoDto', 'AssignmentDto', 'DestinationSetDto', 'Status'])
      expect(doc.components.schemas).toHaveProperty(dto);
    expect(doc.components.schemas.InductDto.properties.TrackID.example).toBe('0004711');
    const timeOut = doc.paths['/sortation'].get.parameters.find((p: { name: string }) => p.name === 'timeOut');
    expect(timeOut.description).toMatch(/clamped to 0\.\.30/);
    await t.close();
  });

  it('serves the UI files from swagger-ui-dist', async () => {
    const t = await testService({ TestMode: true });
    const ui = await t.server.inject('/');
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css']) {
      expect(ui.payload).toContain(`/swaggerui/${asset}`);
      const res = await t.server.inject(`/swaggerui/${asset}`);
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.length).toBeGreaterThan(10_000);
    }
    await t.close();
  });
});
