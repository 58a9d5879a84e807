// The process entry point: config, service, server, schedules, and a clean shutdown on
// SIGTERM/SIGINT/SIGHUP.
import './process/v8-heap'; // first: V8's heap growing factor, before any module loads
import type Hapi from '@hapi/hapi';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { collectorLine } from './process/collector';
import { commandLine } from './process/command-line';
import { type Config, ConfigError, configAdvice, databaseFile, loadConfig, resolveHome } from './process/config';
import { type InstanceLock, InstanceLockedError, lockInstance } from './process/instance-lock';
import { type Logger, createLogger, stdoutDestination } from './process/logger';
import { closeHungUpTerminalAtExit } from './process/terminal';
import { loadManifest } from './functions/manifest';
import { projectRoot, version } from './process/paths';
import { startSchedules } from './functions/schedule';
import { createServer } from './http/server';
import { type Service, createService } from './service';
import { warmUp } from './http/warm-up';
import { SystemdNotifier } from './process/systemd';
import { lowerHelperThreadsAtStart } from './process/thread-priority';
import { LayoutError } from './layout/load';
import { narrowerThanContract, sorterLayout } from './layout/site-layout';
import { errorCode, errorMessage } from './process/errors';

/** Exit with `code` and one line on stderr when `run` throws one of `errors` (config, a second instance). */
function orExit<T>(run: () => T, errors: Array<new (...a: never[]) => Error>, code: number): T {
  try {
    return run();
  } catch (err) {
    if (!errors.some((E) => err instanceof E)) throw err;
    process.stderr.write(`sorter-integration: ${errorMessage(err)}\n`);
    process.exit(code);
  }
}

/**
 * Process entry: read config.json from the service home, open the queues, listen, run the
 * schedules, and shut down cleanly on SIGTERM/SIGINT/SIGHUP. `--default-home DIR` names the home
 * used when SORTER_HOME is not set (npm start uses seeds/, the sample replay).
 */
async function main(argv: string[]): Promise<void> {
  closeHungUpTerminalAtExit();
  // The home comes from SORTER_HOME: an option that is not ours (--home, say) must not pass
  // unnoticed while the service opens another home's database.
  const args = commandLine(
    'sorter-integration',
    'SORTER_HOME=DIR node dist/lib/main.js [--default-home DIR]   (docs/configuration.md)',
    { 'default-home': { type: 'string' } },
    argv,
  );
  const home = resolveHome(process.env, args['default-home'] || projectRoot);
  // A mistyped SORTER_HOME must not pass for the real one: say so once the log is up.
  const newHome = !fs.existsSync(home) || fs.readdirSync(home).length === 0;
  const config = orExit(() => loadConfig(home), [ConfigError], 78); // EX_CONFIG
  const layout = orExit(() => sorterLayout(home, config.Sorter), [LayoutError], 78); // every problem of Sorter.Layout's file
  // Before anything is touched: a second instance on this home must change nothing.
  instanceLock = orExit(() => lockInstance(home), [InstanceLockedError], 75); // EX_TEMPFAIL
  const out = stdoutDestination();
  const log = createLogger(config.LogLevel, out.stream);
  if (newHome)
    log.warn(
      { home },
      `the service home ${home} did not exist or was empty: starting with a new, empty home (no config.json: all defaults; check SORTER_HOME)`,
    );
  for (const line of narrowerThanContract(layout)) log.warn({ layout: layout.name }, line);
  for (const line of configAdvice(config)) log.info(line);
  const collector = collectorLine(process.execArgv, process.env);
  log.info(collector.fields, collector.message);
  const manifest = loadManifest();
  // Checked before anything is touched (the test database re-seeded, the sorter connected).
  const unusable = await preflight(home, config);
  if (unusable) {
    process.stderr.write(`sorter-integration: ${unusable}\n`);
    log.error({ home }, unusable);
    await out.output.flush(1000);
    process.exit(78); // EX_CONFIG
  }
  // Before any thread of ours starts: the writer and the checkpointer keep the process's priority.
  const helpers = await lowerHelperThreadsAtStart(config.HelperThreadNice);
  log.debug({ nice: config.HelperThreadNice, ...helpers }, 'helper threads lowered in priority');
  const service = await createService({ home, config, log, version, layout, lastStopClean: instanceLock.lastStopClean });
  const server = await createServer(service, { manifest });
  await server.start();
  // Under systemd (deploy/, Type=notify): ready once listening, and the watchdog fed from there on.
  const systemd = SystemdNotifier.fromEnv(process.env, log);
  // From here a client can reach the port (the warm-up below asks it about a hundred requests), so a
  // stop must find its handler from here on; the schedules it stops start after the warm-up.
  const schedules = { stop: () => {} };
  const stopping = stopOnSignals({ log, systemd, stopSchedules: () => schedules.stop(), service, server, output: out.output });
  // Before the sorter connects: the first parcels do not wait for V8 to compile what they run.
  log.debug(await warmUp(server, config.ApiKeys), 'warm-up');
  // A stop during the warm-up: the shutdown under way closes the service; nothing more starts.
  if (stopping()) return;
  service.startLink();
  schedules.stop = startSchedules(manifest, service.deps);
  const address = `http://${config.Host.includes(':') ? `[${config.Host}]` : config.Host}:${server.info.port}`;
  const mode = config.TestMode ? 'test mode' : 'live mode';
  log.info(
    { url: server.info.uri, address, home, testMode: config.TestMode, replay: service.deps.replay },
    `listening on ${address} (${mode}); Swagger UI at /`,
  );
  systemd?.ready(`listening on ${address} (${mode})`);
  if (!isLoopback(config.Host) && config.ApiKeys.length === 0) {
    log.warn(
      { host: config.Host },
      `listening on ${config.Host}, beyond this machine, with no ApiKeys: anyone who can reach port ${server.info.port} can take messages and send assignments (set ApiKeys, or Host "127.0.0.1")`,
    );
  }
}

/**
 * A clean stop on SIGTERM, SIGINT or SIGHUP: the schedules, the waiting polls answered, the
 * responses finished, the database closed, the lock released. Whatever hangs (a client, the disk),
 * the process ends within SHUTDOWN_LIMIT_MS: a supervisor's stop must work. Installed as soon as
 * the server listens, before its warm-up and before anybody is told that it listens: a stop sent
 * while it starts or the moment it is ready (a supervisor, a test) must find the handler, or the
 * signal's default ends the process uncleanly. Returns whether a stop has begun.
 */
function stopOnSignals(p: {
  log: Logger;
  systemd: SystemdNotifier | null;
  stopSchedules: () => void;
  service: Service;
  server: Hapi.Server;
  output: { dropped(): number; flush(ms: number): Promise<unknown> };
}): () => boolean {
  const { log, systemd, service, server, output } = p;
  let began = false;
  // Past the limit the stop is given up: not a clean stop (instance.pid stays: the next start marks
  // what comes again), and the writer is first brought out of a wait for the write lock.
  let givenUp = false;
  const shutdown = onceOnly(async (signal: string) => {
    began = true;
    setTimeout(() => {
      givenUp = true;
      void service.writer.giveUp().finally(() => process.exit(1));
    }, SHUTDOWN_LIMIT_MS).unref();
    log.info({ signal }, 'shutting down: answering waiting polls, finishing responses, closing the database');
    systemd?.stopping(`stopping (${signal})`);
    p.stopSchedules();
    service.drain();
    await server.stop({ timeout: 10_000 });
    await service.close();
    if (givenUp) return; // exit 1 follows
    log.info({ droppedLogLines: output.dropped() }, 'stopped');
    await output.flush(1000);
    instanceLock?.release(true);
    systemd?.close();
    process.exit(0);
  });
  // Kept after the first: a second signal while stopping (Ctrl-C twice, a supervisor that repeats
  // itself) is ignored, not Node's default that ends the process mid-stop.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // The terminal it runs in has gone (an operator's ssh session dropped, its window closed): the
  // process ends either way (Node undoes nohup's ignoring of SIGHUP at start), so it ends clean.
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  return () => began;
}

/** `f` on its first call; later calls do nothing (a second signal while stopping). */
function onceOnly<A extends unknown[]>(f: (...a: A) => Promise<void>): (...a: A) => Promise<void> {
  let called = false;
  return async (...a) => {
    if (called) return;
    called = true;
    await f(...a);
  };
}

/** Can the service listen where configured, and write its database's folder? A sentence if not. */
async function preflight(home: string, config: Config): Promise<string | null> {
  const listen = await new Promise<string | null>((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      resolve(`cannot listen on ${config.Host}:${config.Port} (Host, Port in config.json): ${err.code ?? err.message}`),
    );
    probe.listen(config.Port, config.Host, () => probe.close(() => resolve(null)));
  });
  if (listen) return listen;
  const file = databaseFile(home, config);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.accessSync(path.dirname(file), fs.constants.W_OK);
  } catch (err) {
    return `cannot use the database folder ${path.dirname(file)} (${config.TestMode ? 'TestDatabase' : 'Database'} in config.json): ${errorCode(err) ?? errorMessage(err)}`;
  }
  return null;
}

/** Addresses that only this machine can reach. */
const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/** Held for the life of the process (a lock that is garbage-collected would be released). */
let instanceLock: InstanceLock | undefined;

/** A shutdown that takes longer than this (the HTTP drain is bounded at 10 s) exits with 1. */
const SHUTDOWN_LIMIT_MS = 20_000;

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`sorter-integration: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
