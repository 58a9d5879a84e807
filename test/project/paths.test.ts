// The two paths of docs/architecture.md, measured: which of the project's files a message crosses
// between a REQUEST's bytes and its GET's 210 (path 1), and between a POST /sortation and its 200,
// the assignment's telegram sent and acknowledged on the way (path 2). The real service runs
// in-process against a scripted PLC over real TCP; V8's precise coverage (call counts) lists every
// file whose functions ran in the window. A few rounds, intersected, drop what a timer ran by
// chance. Of what remains, the files in OBSERVERS are side branches: told of the message (a copy,
// a count, a time) and returning nothing the path uses. The others carry the message, and their
// number may not grow. `npx jest test/project/paths.test.ts --selectProjects fast` prints both
// paths on a `PATHS {json}` line.
import http from 'node:http';
import inspector from 'node:inspector';
import net from 'node:net';
import path from 'node:path';
import { encodeContent, sorterMessageData } from '../../bench/v1-codec';
import { induct } from '../helpers/messages';
import { ack, scriptedPlc } from '../helpers/scripted-plc';
import { type TestService, testService } from '../helpers/service';
import { until } from '../helpers/until';

/** The most files each path may cross from the route's handler on (at most 12); lower it when a path gets shorter. */
const MOST_CARRYING = { request: 12, assignment: 12 };

/**
 * Side branches: files that run in a path's window without carrying its message. Each is told of
 * the message (or of the time it took) and hands nothing back that the path goes on with.
 */
const OBSERVERS: Record<string, string> = {
  'lib/ops/latency.ts': 'wake and decision latencies: times in, nothing out',
  'lib/ops/event-loop.ts': "the event loop's delay, sampled while there is work",
  'lib/ops/metrics.ts': 'Prometheus counters incremented',
  'lib/ops/alarms.ts': 'told a message came (SORTER_SILENT); answers nothing',
  'lib/link/recent.ts': "the link's last telegrams kept for /status",
  'lib/link/traffic-log.ts': 'Service_PLC.log: a copy of each telegram written out',
  'lib/http/access-log.ts': 'the access log line of the request',
  'lib/ops/last-hour.ts': "the dashboard's last hour: a decision counted",
  'db/storage-status.ts': "the writer's status read from shared memory (is storage prompt)",
  'lib/service.ts': 'the clock and the metrics hooks the service wires (clock, wake.observe, onCommit): a time in, counts out',
  'lib/queue/arrivals.ts':
    'told when a message or outbox entry arrived (an id and a time in); its ages are read by the expiry and the alarms',
};

/**
 * The door every HTTP request passes before its route's handler (hapi's extension points, the
 * guards, the body parsed and its keys and values checked): the POST of path 2 crosses it inside
 * the window, the GET of path 1 before it opens. Listed apart, so that both paths count alike
 * from the route's handler on, as the issue's paths do; the door has its own bound.
 */
const DOOR = new Set([
  'lib/http/server.ts',
  'lib/http/documentation.ts',
  'lib/http/guards.ts',
  'lib/http/auth.ts',
  'lib/http/forwarded.ts',
  'lib/http/wire-errors.ts',
  'lib/internals/hapi.ts',
  'lib/http/input-keys.ts',
  'lib/http/input-validators.ts',
  'lib/process/json-keys.ts',
]);

/**
 * Side branches of one path only: on path 1 the 210 does not wait for the commit
 * (HandOutBeforeCommit), so the writer's command and what the commit's answer runs are beside it.
 */
const SIDE_BRANCHES: Record<keyof typeof MOST_CARRYING, Record<string, string>> = {
  request: {
    'db/writer.ts': 'the commit of the REQUEST, which the 210 does not wait for',
    'db/service-stores.ts': 'the commit of the REQUEST (links.acceptFromPeer), which the 210 does not wait for',
  },
  assignment: {},
};

const root = path.join(__dirname, '..', '..');
const rounds = 4;

interface Coverage {
  result: Array<{ url: string; functions: Array<{ functionName: string; ranges: Array<{ count: number }> }> }>;
}
/** The functions that ran in each file, kept for a reader of a failure (PATHS_FUNCTIONS=1 prints them). */
const functionsRun = new Map<string, Set<string>>();
const post = <T>(s: inspector.Session, method: string, params: object = {}) =>
  new Promise<T>((resolve, reject) => s.post(method, params, (err, res) => (err ? reject(err) : resolve(res as T))));

/** The project's files (not the tests', not node_modules') whose functions ran since the last take. */
async function filesRun(s: inspector.Session): Promise<Set<string>> {
  const { result } = await post<Coverage>(s, 'Profiler.takePreciseCoverage');
  const ran = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = path.relative(root, script.url.slice('file://'.length));
    if (file.startsWith('..') || file.startsWith('node_modules') || file.startsWith('test/') || file.startsWith('bench/')) continue;
    const names = script.functions.filter((f) => (f.ranges[0]?.count ?? 0) > 0).map((f) => f.functionName || '(anonymous)');
    if (names.length === 0) continue;
    ran.add(file);
    functionsRun.set(file, new Set(names));
  }
  return ran;
}

/**
 * Stacks where the message is handed on: every socket write in the window (the telegram out, the
 * response out) and the dispatcher's wake-up of the waiting GET (the REQUEST handed out). A file met in two runs of frames apart (A, B, A) was entered twice on the way.
 */
function enteredTwice(stacks: string[]): Map<string, string> {
  const twice = new Map<string, string>();
  for (const stack of stacks) {
    const files = [...stack.matchAll(/\(?(\/[^():\s]+\.[jt]s):\d+:\d+\)?/g)]
      .map((m) => path.relative(root, m[1] ?? ''))
      .filter((f) => !f.startsWith('..') && !f.startsWith('node_modules') && !f.startsWith('test/'));
    const runs = files.filter((f, i) => f !== files[i - 1]);
    runs.forEach((f, i) => runs.indexOf(f) !== i && twice.set(f, runs.join(' < ')));
  }
  return twice;
}

function request(uri: string, method: string, body?: object): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${uri}`, { method, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

describe('the paths of docs/architecture.md', () => {
  let plc: ReturnType<typeof scriptedPlc>;
  let t: TestService;
  const s = new inspector.Session();
  const writes: string[] = [];
  let recording = false;
  const socketWrite = net.Socket.prototype.write;

  beforeAll(async () => {
    plc = scriptedPlc((tg, send) => tg.flag === 'D' && send(ack(tg)));
    // Port 0: the service's own 8081 may be taken (`npm start` running beside the tests).
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0, Sorter: { Host: '127.0.0.1', Port: await plc.listening } });
    await t.server.start();
    await until(() => plc.received.some((x) => x.type === 'SYNE'));
    s.connect();
    await post(s, 'Profiler.enable');
    await post(s, 'Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    Error.stackTraceLimit = 200;
    net.Socket.prototype.write = function write(this: net.Socket, ...args: unknown[]) {
      if (recording) writes.push(new Error('write').stack ?? '');
      return Reflect.apply(socketWrite, this, args) as boolean;
    };
    const dispatcher = t.service.deps.dispatchers.sortation;
    const notify = dispatcher.notify.bind(dispatcher);
    dispatcher.notify = (tableChanged) => {
      if (recording) writes.push(new Error('notify').stack ?? '');
      notify(tableChanged);
    };
  });

  // Whatever failed before (a start that failed, a session never connected), the service and the
  // sorter are closed: left open, they kept the Jest worker from ending.
  afterAll(async () => {
    net.Socket.prototype.write = socketWrite;
    Error.stackTraceLimit = 10;
    await post(s, 'Profiler.stopPreciseCoverage').catch(() => {}); // the session may never have connected
    s.disconnect();
    try {
      await (t as TestService | undefined)?.close(); // unset if the service could not be built
    } finally {
      await plc.close();
    }
  });

  /** The files a path crosses in every round (`open` starts the window), and the files entered twice on the way in every round. */
  async function measure(name: string, round: (n: number, open: () => Promise<void>) => Promise<void>) {
    let common: Set<string> | null = null;
    let twice: Map<string, string> | null = null;
    for (let n = 1; n <= rounds; n++) {
      await round(n, async () => {
        await filesRun(s);
        writes.length = 0;
        recording = true;
      });
      recording = false;
      const ran = await filesRun(s);
      common = new Set([...(common ?? ran)].filter((f) => ran.has(f)));
      const found = enteredTwice(writes);
      twice = new Map([...(twice ?? found)].filter(([f]) => found.has(f)));
      await t.settled();
    }
    const files = [...(common ?? [])].sort();
    if (process.env.PATHS_FUNCTIONS)
      console.log(`${name}\n${files.map((f) => `${f}: ${[...(functionsRun.get(f) ?? [])].join(' ')}`).join('\n')}`);
    return { files, twice: [...(twice ?? new Map<string, string>()).keys()].sort(), stacks: [...new Set(twice?.values())] };
  }

  function classify(name: keyof typeof MOST_CARRYING, files: string[]) {
    const side = { ...OBSERVERS, ...SIDE_BRANCHES[name] };
    return {
      carrying: files.filter((f) => !(f in side) && !DOOR.has(f)),
      door: files.filter((f) => DOOR.has(f)),
      observers: files.filter((f) => f in side),
    };
  }

  it('path 1, a REQUEST to its 210, and path 2, a POST to its telegram, stay short', async () => {
    const base = t.server.info.uri;
    const requestPath = await measure('request', async (n, open) => {
      const got = request(`${base}/sortation?timeOut=5`, 'GET');
      await until(() => t.service.deps.dispatchers.sortation.waiting > 0, 2000, 'the GET waits in line', 5);
      await open();
      const { type, data } = sorterMessageData(induct(String(n).padStart(7, '0'), { Barcode: `B${n}` }));
      plc.toHost(encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq: n, type, flag: 'D', data }));
      const res = await got;
      expect(res.status).toBe(210);
    });
    const assignmentPath = await measure('assignment', async (n, open) => {
      await open();
      const res = await request(`${base}/sortation`, 'POST', { TrackID: String(n).padStart(7, '0'), Destination: 'D017' });
      expect(res.status).toBe(200);
      // The 200 came with the sorter's ACK or with a sync, whichever was first: the ACK's way in is on the path either way.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(plc.received.some((x) => x.type === 'ASGN' && x.data.includes('D017'))).toBe(true);
    });
    const report = {
      request: { ...classify('request', requestPath.files), enteredTwice: requestPath.twice, stacks: requestPath.stacks },
      assignment: { ...classify('assignment', assignmentPath.files), enteredTwice: assignmentPath.twice, stacks: assignmentPath.stacks },
    };
    console.log(`PATHS ${JSON.stringify(report)}`);
    expect(report.request.carrying.length).toBeLessThanOrEqual(MOST_CARRYING.request);
    expect(report.assignment.carrying.length).toBeLessThanOrEqual(MOST_CARRYING.assignment);
    expect(report.assignment.door.length).toBeLessThanOrEqual(DOOR.size);
    // No module entered twice: no file on a path's stack in two runs of frames apart.
    expect(report.request.enteredTwice).toEqual([]);
    expect(report.assignment.enteredTwice).toEqual([]);
  });
});
