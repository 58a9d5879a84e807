// `npm run emulator`: the emulated sorter PLC as a command, with its fault switches and its
// EMULATOR {json} report.
import fs from 'node:fs';
import path from 'node:path';
import { commandLine, nonNegative } from '../lib/process/command-line';
import { LayoutError, loadLayout } from '../lib/layout/load';
import { layoutFile } from '../lib/layout/site-layout';
import { type TelegramWire, layoutWire } from '../lib/layout/wire';
import { PlcLink } from './plc-link';
import { errorMessage } from '../lib/process/errors';
import { EmulatedSorter, defaultSorterOptions } from './sorter';
import { HELPER_THREAD_NICE, lowerHelperThreadsAtStart } from '../lib/process/thread-priority';

/**
 * `npm run emulator -- --port N --rate R --seed S [--duration SECONDS] [--layout FILE]`: a sorter
 * PLC on TCP, speaking protocol version 1 or the layout FILE (a shipped one by name, or a file).
 * Prints `emulator listening on HOST:PORT` when ready and, at exit (duration over, SIGTERM or
 * SIGINT), one line `EMULATOR {json}` with the run's counters.
 */
const a = commandLine('emulator', 'npm run emulator -- [options]', {
  port: { type: 'string', default: '2000' },
  host: { type: 'string', default: '127.0.0.1' },
  rate: { type: 'string', default: String(defaultSorterOptions.rate) },
  seed: { type: 'string', default: String(defaultSorterOptions.seed) },
  duration: { type: 'string' },
  'decision-window': { type: 'string', default: String(defaultSorterOptions.decisionWindowMs) },
  'loop-ms': { type: 'string', default: String(defaultSorterOptions.loopMs) },
  'max-recirculations': { type: 'string', default: String(defaultSorterOptions.maxRecirculations) },
  destinations: { type: 'string', default: String(defaultSorterOptions.destinations) },
  capacity: { type: 'string', default: String(defaultSorterOptions.capacity) },
  'no-read-rate': { type: 'string', default: String(defaultSorterOptions.noReadRate) },
  'empty-after-ms': { type: 'string', default: String(defaultSorterOptions.emptyAfterMs) },
  'heartbeat-ms': { type: 'string', default: '2000' },
  'ack-timeout-ms': { type: 'string', default: '1000' },
  'drop-every': { type: 'string', default: '0' },
  'silent-after': { type: 'string', default: '0' },
  'silent-for': { type: 'string', default: '0' },
  'garbage-every': { type: 'string', default: '0' },
  'repeat-every': { type: 'string', default: '0' },
  'split-bytes': { type: 'boolean', default: false },
  'restart-after': { type: 'string', default: '0' },
  'first-seq': { type: 'string', default: '1' },
  'drain-timeout': { type: 'string', default: '15' },
  'start-when-connected': { type: 'string', default: '' },
  'measure-after': { type: 'string', default: '0' },
  'decision-log': { type: 'string' },
  layout: { type: 'string', default: 'v1' },
  verbose: { type: 'boolean', default: false },
});

const num = (name: keyof typeof a): number => nonNegative('emulator', name, a[name]);

/** The layout of --layout: a path, or a shipped layout by name; every problem and exit 78 if it cannot be used. */
function wireOf(name: string): TelegramWire {
  try {
    return layoutWire(loadLayout(layoutFile(process.cwd(), name)));
  } catch (err) {
    if (!(err instanceof LayoutError)) throw err;
    process.stderr.write(`emulator: --layout ${path.basename(name)}: ${err.message}\n`);
    process.exit(78);
  }
}

/** The link of the command line's options, its faults included; its data telegrams go to `onData`. */
function linkOf(onData: EmulatedSorter['onData']): PlcLink {
  return new PlcLink({
    wire: wireOf(a.layout),
    port: num('port'),
    host: a.host,
    heartbeatMs: num('heartbeat-ms'),
    ackTimeoutMs: num('ack-timeout-ms'),
    firstSeq: Math.max(1, num('first-seq')),
    misbehave: {
      dropEverySeconds: num('drop-every'),
      silentAfterSeconds: num('silent-after'),
      silentForSeconds: num('silent-for'),
      garbageEvery: num('garbage-every'),
      repeatEvery: num('repeat-every'),
      splitBytes: a['split-bytes'] === true,
      restartAfterSeconds: num('restart-after'),
    },
    onData,
    log: a.verbose ? (line) => process.stderr.write(`emulator: ${line}\n`) : undefined,
  });
}

/**
 * --start-when-connected MS: induct only from MS after the first host connects (a benchmark then
 * measures the steady state, not the minutes before anyone listened). Without it, at once.
 */
function startWhenConnected(link: PlcLink): Promise<void> {
  const startDelay = a['start-when-connected'] === '' ? undefined : num('start-when-connected');
  return new Promise<void>((resolve) => {
    if (startDelay === undefined) return resolve();
    const poll = setInterval(() => {
      if (!link.connected) return;
      clearInterval(poll);
      setTimeout(resolve, startDelay);
    }, 20);
  });
}

/**
 * The file of --decision-log, made (empty) before anything starts: a path that cannot be written
 * is one line and exit 2 now, not a run whose samples are lost at its end.
 */
function decisionLogFile(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    fs.writeFileSync(file, '');
    return file;
  } catch (err) {
    process.stderr.write(`emulator: --decision-log takes a file it can write; ${file}: ${errorMessage(err)}\n`);
    process.exit(2);
  }
}

async function main() {
  const decisionLog = decisionLogFile(a['decision-log']);
  // A sorter's timing is the emulator's to keep: its own V8 compiling on a box shared with the
  // service and a WCS (the benchmark's) must not delay its telegrams, nor take the service's core.
  await lowerHelperThreadsAtStart(HELPER_THREAD_NICE);
  const sorterRef: { current?: EmulatedSorter } = {};
  const link = linkOf((t) => sorterRef.current?.onData(t)); // set below, before the link connects
  const sorter = new EmulatedSorter(link, {
    rate: num('rate'),
    seed: num('seed'),
    decisionWindowMs: num('decision-window'),
    loopMs: num('loop-ms'),
    maxRecirculations: num('max-recirculations'),
    destinations: num('destinations'),
    capacity: num('capacity'),
    noReadRate: num('no-read-rate'),
    emptyAfterMs: num('empty-after-ms'),
    measureAfterMs: num('measure-after') * 1000,
    keepDecisions: decisionLog !== undefined,
  });
  sorterRef.current = sorter;
  const port = await link.listen();
  process.stdout.write(`emulator listening on ${a.host}:${port}\n`);
  await startWhenConnected(link);
  const inductingSince = Date.now();
  sorter.start();

  let done = false;
  const finish = async (drain: boolean) => {
    if (done) return;
    done = true;
    sorter.stopInducting();
    if (drain) {
      // Let the items on the sorter finish their passes and the host acknowledge everything.
      const until = Date.now() + num('drain-timeout') * 1000;
      while (Date.now() < until && (sorter.onSorter > 0 || link.unacknowledged > 0)) await new Promise((r) => setTimeout(r, 50));
    }
    sorter.stop();
    if (decisionLog !== undefined) fs.writeFileSync(decisionLog, sorter.decisionLog() ?? '');
    const stats = {
      ...sorter.stats,
      ...sorter.decisionSummary(),
      ...link.counters,
      on_sorter_at_exit: sorter.onSorter,
      unacknowledged_at_exit: link.unacknowledged,
      oldest_unacknowledged_at_exit: link.oldestUnacknowledged,
      seed: num('seed'),
      rate: num('rate'),
      inducting_since_ms: inductingSince,
    };
    process.stdout.write(`EMULATOR ${JSON.stringify(stats)}\n`);
    await link.close();
    process.exit(0);
  };
  if (a.duration !== undefined) setTimeout(() => void finish(true), num('duration') * 1000);
  process.once('SIGTERM', () => void finish(false));
  process.once('SIGINT', () => void finish(false));
}

void main();
