// `npm run demo`: emulator, service and reference client together, so real traffic flows in one
// command.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { endChildrenWithThisProcess, tracked } from '../lib/process/children';
import { commandLine, nonNegative } from '../lib/process/command-line';
import { errorMessage } from '../lib/process/errors';
import { projectRoot } from '../lib/process/paths';
import { type WcsStats, runWcsClient, statsJson } from './wcs-client';

/**
 * `npm run demo [-- --duration 30 --rate 20 --port 8081]`: the sorter emulator, the service in
 * live mode against it, and the reference WCS client, so real traffic flows in one command.
 * The service home is demo/ (config.json, data/sorter.db, Service_PLC.log): inspect it after.
 */
const values = commandLine('demo', 'npm run demo -- [options]', {
  duration: { type: 'string', default: '30' },
  rate: { type: 'string', default: '20' },
  seed: { type: 'string', default: '1' },
  port: { type: 'string', default: '8081' },
});
for (const name of ['duration', 'rate', 'seed', 'port'] as const) nonNegative('demo', name, values[name]);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });

/** Start a node child and resolve with the first stdout line matching `ready`. */
function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => boolean,
  onLine: (line: string) => void = () => {},
): Promise<ChildProcess> {
  const child = tracked(spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] as const }));
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`${args[0]} exited with ${signal ?? code}`)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      onLine(line);
      if (ready(line)) resolve(child);
    });
  });
}

/** One line of progress: the client's counts, and the queues and the link from the service's GET /status. */
async function progressLine(base: string, s: WcsStats, started: number): Promise<string> {
  const status = (await (await fetch(`${base}/status`)).json()) as {
    'Sortation Q': number;
    'Destination Q': number;
    Outbox: { Depth: number };
    Sorter: { Connected: boolean };
  };
  return (
    `t=${Math.round((Date.now() - started) / 1000)}s  requests ${s.requests}  assigned ${s.assignments_posted}  verified ${s.verifies}  scans ${s.scans}  ` +
    `| queues ${status['Sortation Q']}/${status['Destination Q']}  outbox ${status.Outbox.Depth}  link ${status.Sorter.Connected ? 'up' : 'down'}`
  );
}

async function main() {
  // Stopped (Ctrl-C, kill) or failing, the demo takes its emulator and service with it: a service
  // left running would hold the port and the home the next demo starts in.
  endChildrenWithThisProcess();
  const duration = Number(values.duration);
  const home = path.join(projectRoot, 'demo');
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  const sorterPort = await freePort();
  const httpPort = Number(values.port);
  fs.writeFileSync(
    path.join(home, 'config.json'),
    JSON.stringify({ TestMode: false, Port: httpPort, Host: '127.0.0.1', Sorter: { Host: '127.0.0.1', Port: sorterPort } }, null, 2),
  );

  let emulatorSummary = '';
  const emulator = await start(
    [
      path.join(projectRoot, 'dist/emulator/main.js'),
      '--port',
      String(sorterPort),
      '--rate',
      values.rate,
      '--seed',
      values.seed,
      '--duration',
      String(duration),
    ],
    {},
    (l) => l.startsWith('emulator listening'),
    (l) => l.startsWith('EMULATOR ') && (emulatorSummary = l),
  );
  const service = await start([path.join(projectRoot, 'dist/lib/main.js')], { SORTER_HOME: home }, (l) => l.includes('"url"'));
  const base = `http://127.0.0.1:${httpPort}`;
  console.log(
    `demo: sorter emulator on 127.0.0.1:${sorterPort} (${values.rate} items/s), service on ${base} (Swagger UI at /), home ${home}`,
  );

  const client = runWcsClient({ base, loops: 2, timeOut: 2, durationMs: duration * 1000 + 3000 });
  const started = Date.now();
  const progress = setInterval(
    () => void progressLine(base, client.stats, started).then(console.log, (err: unknown) => console.log(`status: ${errorMessage(err)}`)),
    2000,
  );

  await new Promise((resolve) => emulator.once('exit', resolve));
  await client.stop();
  clearInterval(progress);
  if (service.exitCode === null && service.signalCode === null) {
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
  } else console.log(`demo: the service had ended before the emulator (${service.signalCode ?? `exit code ${service.exitCode}`})`);
  console.log(emulatorSummary);
  console.log(`WCS ${JSON.stringify(statsJson(client.stats))}`);
  console.log(`demo: inspect ${path.join(home, 'data/sorter.db')} with sqlite3 and ${path.join(home, 'Service_PLC.log')}`);
}

main().catch((err) => {
  console.error(`demo failed: ${err.message}`);
  process.exit(1);
});
