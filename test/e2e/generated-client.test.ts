// A WCS team's typed client, made the way such a team makes it: types generated from the served
// OpenAPI document with openapi-typescript, calls through openapi-fetch, compiled with the
// project's own TypeScript in --strict mode (no casts, no `any`), run with node against the
// service replaying 42 messages. A type that regresses (a message body typed `never` again, a
// field optional again, a body no longer required) fails the compile, and so this test.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { csv, removeHome, requestRow, scanRow, tempHome, verifyRow } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** What a team writes: the spec's typical loop, once through both queues (docs/http-api.md, "Generated clients"). */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './api';

const client = createClient<paths>({ baseUrl: process.argv[2] });
const print = (line: object): void => console.log(JSON.stringify(line));

async function status(): Promise<void> {
  const { data, error, response } = await client.GET('/status');
  if (error) throw new Error('GET /status: ' + response.status + ' ' + error.message);
  const sortation: number = data['Sortation Q'];
  const destination: number = data['Destination Q'];
  print({ step: 'status', sortation, destination, redelivered: data.Delivery.Redelivered, testMode: data.TestMode });
}

async function main(): Promise<void> {
  await status();
  // REQUEST (210): answer with a destination; VERIFY (212): nothing to answer.
  for (;;) {
    const { data, error, response } = await client.GET('/sortation', { params: { query: { timeOut: 0 } } });
    if (error) throw new Error('GET /sortation: ' + response.status + ' ' + error.message);
    if (data === undefined) break; // 204: nothing waiting
    print({ step: 'message', status: response.status, message: data });
    if (data.Type === 'REQUEST') {
      const ack = await client.POST('/sortation', { body: { TrackID: data.TrackID, Destination: 'D001', Barcode: data.Barcode } });
      if (ack.error) throw new Error('POST /sortation: ' + ack.response.status + ' ' + ack.error.message);
      const trackId: string = ack.data.Message.TrackID;
      print({ step: 'assigned', status: ack.response.status, trackId, accepted: ack.data.Accepted, delivery: ack.data.Delivery });
    }
  }
  // SCAN (211): every one read; one destination set in answer to the first.
  let first: string | undefined;
  for (;;) {
    const { data, error, response } = await client.GET('/destination', { params: { query: { timeOut: 0 } } });
    if (error) throw new Error('GET /destination: ' + response.status + ' ' + error.message);
    if (data === undefined) break;
    print({ step: 'message', status: response.status, message: data });
    first ??= data.Destination;
  }
  if (first !== undefined) {
    const ack = await client.POST('/destination', { body: { Destination: first, DestinationStatus: 'Ready', LightStatus: 'Solid', LightColor: 'GREEN', DestinationText: 'Tour 1' } });
    if (ack.error) throw new Error('POST /destination: ' + ack.response.status + ' ' + ack.error.message);
    const light: 'Off' | 'RED' | 'GREEN' | 'BLUE' | 'YELLOW' | 'WHITE' = ack.data.Message.LightColor;
    print({ step: 'destination set', status: ack.response.status, destination: ack.data.Message.Destination, light, defaults: ack.data.DefaultsApplied.length });
  }
  await status();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
`;

/**
 * The types, generated with openapi-typescript's Node API from the served document. In a child
 * process, as a team's build runs it: the package is ESM inside (parse-json), which jest's module
 * loader cannot require and Node 20's can.
 */
const GENERATE = `import fs from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

fs.writeFileSync('api.ts', astToString(await openapiTS(new URL(process.argv[2]))));
`;

/** Compiled with the client, never run: what must stay a type error for a generated client. */
const PINS = `import type { Client } from 'openapi-fetch';
import type { paths } from './api';

export async function pins(client: Client<paths>): Promise<void> {
  // @ts-expect-error a POST /sortation has a body (requestBody.required)
  await client.POST('/sortation', {});
  // @ts-expect-error a POST /destination has a body
  await client.POST('/destination', {});
  // @ts-expect-error an assignment names its destination
  await client.POST('/sortation', { body: { TrackID: '0004711' } });
}
`;

/** Run a command to its end; its output as text. */
function run(args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    proc.once('close', (code, signal) => resolve({ code: code ?? signal ?? -1, stdout, stderr }));
  });
}

// The replay file, 43 messages: 17 items (REQUEST then VERIFY; the last one a no-read without
// measures and no VERIFY) and 10 SCANs, each queue in file order.
type Message = Record<string, unknown>;
const inducted = (t: string): Message => ({
  Type: 'REQUEST',
  TrackID: t,
  Barcode: `BC${t}`,
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 100,
  Width: 50,
  Height: 20,
  Weight: 1.5,
});
const verified = (t: string, d: string): Message => ({ Type: 'VERIFY', TrackID: t, Barcode: `BC${t}`, Destination: d, MessageCode: 212 });
const scanned = (d: string, status = 'Ready'): Message => ({
  Type: 'SCAN',
  Destination: d,
  DestinationStatus: status,
  DestinationText: '',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: null,
});
const rows: string[] = [];
const sortation: Array<{ status: number; message: Message }> = [];
const destination: Array<{ status: number; message: Message }> = [];
for (let i = 0; i < 16; i++) {
  const t = `T${String(i + 1).padStart(4, '0')}`;
  rows.push(requestRow(t), verifyRow(t, `D00${i % 5}`));
  sortation.push({ status: 210, message: inducted(t) }, { status: 212, message: verified(t, `D00${i % 5}`) });
  if (i % 2 === 0) {
    const state = i % 4 === 0 ? 'Ready' : 'NotReady';
    rows.push(scanRow(`D01${i / 2}`, state));
    destination.push({ status: 211, message: scanned(`D01${i / 2}`, state) });
  }
}
// Empty numeric columns replay as 0: the DTO fields are numbers (docs/configuration.md, "Test mode and replay files").
rows.push('REQUEST,210,IND02,T0017,,,,,,,,,,,');
sortation.push({
  status: 210,
  message: { ...inducted('T0017'), Barcode: '', InductLocation: 'IND02', Length: 0, Width: 0, Height: 0, Weight: 0 },
});
rows.push('SCAN,211,D018,,,,,,,,Ready,Flashing,RED,Tour 18,7', scanRow('D019'));
destination.push(
  { status: 211, message: { ...scanned('D018'), LightStatus: 'Flashing', LightColor: 'RED', DestinationText: 'Tour 18', ButtonID: 7 } },
  { status: 211, message: scanned('D019') },
);

describe('a client generated from the served OpenAPI document (openapi-typescript, openapi-fetch)', () => {
  let home: string;
  let dir: string;
  afterEach(() => {
    removeHome(home);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('compiles with --strict without casts and reads every replayed message once, in order; every POST is answered 200', async () => {
    expect(sortation.length + destination.length).toBeGreaterThanOrEqual(40);
    home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' }, 'Service_PLC.csv': csv(...rows) });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'generated-client-'));
    const svc = await startServiceProcess(home);
    try {
      // What a team does: generate the types from the document, write the loop, compile, run.
      for (const [name, text] of Object.entries({ 'generate.mjs': GENERATE, 'client.ts': CLIENT, 'pins.ts': PINS }))
        fs.writeFileSync(path.join(dir, name), text);
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      const generate = await run(['generate.mjs', `${svc.base}/openapi.json`], dir, 60_000);
      expect({ code: generate.code, stderr: generate.stderr }).toEqual({ code: 0, stderr: '' });
      // No cast, no any, no non-null assertion, no suppressed error in the client.
      expect(CLIENT).not.toMatch(/\bas\s+[\w{[]|\bany\b|\w!\.|@ts-/);
      const tsc = await run(
        [
          TSC,
          '--strict',
          '--noUncheckedIndexedAccess',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--target',
          'es2022',
          '--types',
          'node',
          'client.ts',
          'pins.ts',
        ],
        dir,
        120_000,
      );
      expect({ code: tsc.code, output: (tsc.stdout + tsc.stderr).trim() }).toEqual({ code: 0, output: '' });

      const client = await run(['client.js', svc.base], dir, 60_000);
      expect({ code: client.code, stderr: client.stderr }).toEqual({ code: 0, stderr: '' });
      const lines = client.stdout
        .trim()
        .split('\n')
        .map((l): Message => JSON.parse(l));
      expect(lines[0]).toEqual({
        step: 'status',
        sortation: sortation.length,
        destination: destination.length,
        redelivered: 0,
        testMode: true,
      });
      expect(lines.filter((l) => l.step === 'message').map(({ status, message }) => ({ status, message }))).toEqual([
        ...sortation,
        ...destination,
      ]);
      // One assignment right after each REQUEST, answered 200; nothing after a VERIFY.
      const after = lines.flatMap((l, i) => (l.step === 'assigned' ? [{ message: lines[i - 1]?.message, ...l }] : []));
      const requests = sortation.filter((m) => m.status === 210).map((m) => m.message);
      expect(after).toEqual(
        requests.map((m) => ({ message: m, step: 'assigned', status: 200, trackId: m.TrackID, accepted: true, delivery: 'NotSent' })),
      );
      expect(lines.filter((l) => l.step === 'destination set')).toEqual([
        { step: 'destination set', status: 200, destination: 'D010', light: 'GREEN', defaults: 0 },
      ]);
      expect(lines.at(-1)).toEqual({ step: 'status', sortation: 0, destination: 0, redelivered: 0, testMode: true });
    } finally {
      await svc.stop();
    }
  });
});
