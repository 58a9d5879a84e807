// Stopping the real process: SIGTERM ends it whatever happened to its log destination, and a log
// reader that stalls never stalls the service (a log shipper that stopped reading, a full pipe).
// The terminal it was started from hanging up (SIGHUP) ends it clean too.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { LAUNCHER_PATH, launchEnv, spawnService, startServiceProcess } from '../helpers/process';
import { itWhen, missingCommands } from '../helpers/tools';
import { freePort } from '../helpers/net';
import { until } from '../helpers/until';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Each test starts the service up to five times, a second or more each on a busy machine and on
// the newer Node lines: Jest's 5 s would fail a stop that works. The stops' own bounds are
// checked where they are the point (stopMs).
jest.setTimeout(60_000);

/** A sorter that floods the link with bytes outside any frame: each is a warning in the log. */
function garbageSorter(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    const t = setInterval(() => !s.destroyed && s.write('garbage-outside-a-frame\x03'.repeat(50)), 5);
    s.on('close', () => clearInterval(t));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    ),
  );
}

/** The service on `port` answers GET /status (false while it cannot be reached). */
const answersStatus = (port: number) => () =>
  fetch(`http://127.0.0.1:${port}/status`)
    .then((r) => r.status === 200)
    .catch(() => false);

async function timed<T>(p: Promise<T>): Promise<number> {
  const t0 = Date.now();
  await p;
  return Date.now() - t0;
}

describe('stopping the service', () => {
  it('keeps serving while nobody reads its stdout, and stops on SIGTERM within seconds', async () => {
    const sorter = await garbageSorter();
    const home = tempHome({
      'config.json': JSON.stringify({ TestMode: false, Port: 0, Sorter: { Host: '127.0.0.1', Port: sorter.port } }),
    });
    const svc = await startServiceProcess(home);
    // Stop reading: the pipe fills within moments (hundreds of warnings a second).
    svc.proc.stdout!.pause();
    svc.proc.stdout!.removeAllListeners('data');
    await sleep(2000);
    const statusMs = await timed(fetch(`${svc.base}/status`).then((r) => r.json()));
    expect(statusMs).toBeLessThan(1000);
    const stopMs = await timed(svc.stop('SIGTERM'));
    expect(await svc.exited).toBe(0);
    expect(stopMs).toBeLessThan(5000);
    sorter.close();
    removeHome(home);
  });

  it('stops on SIGTERM when the readers of its stdout and stderr have closed them', async () => {
    const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: 0 }) });
    const svc = await startServiceProcess(home);
    svc.proc.stdout!.destroy();
    svc.proc.stderr!.destroy();
    await sleep(200);
    const stopMs = await timed(svc.stop('SIGTERM'));
    expect(stopMs).toBeLessThan(5000);
    removeHome(home);
  });

  it('a second SIGTERM (or SIGINT) while it stops does not cut the stop short: exit 0, instance.pid removed', async () => {
    const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: 0, Host: '127.0.0.1' }) });
    for (const second of ['SIGTERM', 'SIGINT'] as const) {
      const svc = await startServiceProcess(home);
      // A client holding a long poll: the stop answers it, then waits for the response to finish.
      const poll = fetch(`${svc.base}/sortation?timeOut=30`).then((r) => r.status, String);
      await until(
        async () => (await call(svc.base, 'GET', '/status')).json.WaitingClients['Sortation Q'] === 1,
        5000,
        'the long poll is waiting',
        20,
      );
      svc.proc.kill('SIGTERM');
      await until(() => svc.logs.some((l) => String(l.msg).startsWith('shutting down')), 5000, 'the stop began');
      svc.proc.kill(second);
      expect(await svc.exited).toBe(0);
      expect(await poll).toBe(204);
      expect(fs.existsSync(path.join(home, 'data/instance.pid'))).toBe(false);
    }
    removeHome(home);
  });

  it('a SIGTERM sent the moment it says it listens is a clean stop (exit 0, instance.pid removed), so the next start marks no resend', async () => {
    const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: 0 }) });
    for (let i = 0; i < 5; i++) {
      const { proc, exited } = spawnService(home);
      // From the very read that brings the line: no turn of the event loop in between.
      proc.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('"msg":"listening on')) proc.kill('SIGTERM');
      });
      expect(await exited).toBe(0);
      expect(fs.existsSync(path.join(home, 'data/instance.pid'))).toBe(false);
    }
    removeHome(home);
  });

  it('a SIGTERM sent once it answers HTTP, before it says it listens (its warm-up), is a clean stop too', async () => {
    // As an operator's curl or a health check would: the first answer, then the stop. The port is
    // known beforehand, so the first answer can come before the start-up line does.
    let inWarmUp = 0;
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: port }) });
      try {
        const { proc, exited } = spawnService(home);
        let out = '';
        proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
        await until(answersStatus(port), 20_000, 'the service answering /status', 2);
        proc.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(out).toContain('"msg":"stopped"');
        expect(fs.existsSync(path.join(home, 'data/instance.pid'))).toBe(false);
        // Stopped before its start-up line: the stop came during the warm-up, and nothing started after it.
        if (!out.includes('"msg":"listening on')) inWarmUp += 1;
      } finally {
        removeHome(home);
      }
    }
    // The warm-up's hundred requests take longer than a poll every 2 ms: at least one stop falls in it.
    expect(inWarmUp).toBeGreaterThan(0);
  });

  it('stops on SIGTERM within seconds when its stdout is a file on a full disk (every log write fails: ENOSPC)', async () => {
    // /dev/full: every write fails with ENOSPC, as a log file on a disk that ran full does. The
    // last lines are flushed as the process exits; a write that fails there must not be retried for ever.
    const port = await freePort();
    const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: port }) });
    const full = fs.openSync('/dev/full', 'w');
    try {
      const { proc, exited } = spawnService(home, {}, full);
      await until(answersStatus(port), 20_000, 'the service answering /status', 20);
      const t0 = Date.now();
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(fs.existsSync(path.join(home, 'data/instance.pid'))).toBe(false);
    } finally {
      fs.closeSync(full);
      removeHome(home);
    }
  });

  itWhen(missingCommands({ python3: 'apt-get install python3' }), 'a terminal that hangs up')(
    'started from a terminal that then hangs up (an ssh session dropped): a clean stop, exit 0, instance.pid removed',
    () => {
      // npm start in an operator's terminal: the service's log on the terminal, and the terminal
      // gone once the service listens. The kernel sends SIGHUP; the log can no longer be written.
      const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: 0 }) });
      try {
        const run = spawnSync(
          'python3',
          [path.resolve(__dirname, '../fixtures/terminal-hangup.py'), '"msg":"listening on', '30', '/bin/sh', LAUNCHER_PATH],
          { env: launchEnv(home), encoding: 'utf8', timeout: 70_000 },
        );
        const ended = JSON.parse(run.stdout) as { marker: boolean; exit: number | null; signal: number | null; hung: boolean };
        expect(ended.marker).toBe(true);
        expect({ exit: ended.exit, signal: ended.signal, hung: ended.hung }).toEqual({ exit: 0, signal: null, hung: false });
        expect(fs.existsSync(path.join(home, 'data/instance.pid'))).toBe(false);
      } finally {
        removeHome(home);
      }
    },
  );
});
