// systemd's notify protocol (lib/process/systemd.ts) to a real Unix datagram socket bound here
// (with unix-dgram, as the service sends): READY with its status and pid, the watchdog at half
// WATCHDOG_USEC and only for its own pid, STOPPING, and a socket nobody listens on logged.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SystemdNotifier } from '../../../lib/process/systemd';
import { capturingLogger } from '../../helpers/log';
import { itWhen } from '../../helpers/tools';
import { until } from '../../helpers/until';
import { nth } from '../../helpers/nth';

interface Receiver {
  bind(path: string): void;
  close(): void;
}
let unix: { createSocket(type: 'unix_dgram', onMessage: (buf: Buffer) => void): Receiver } | null = null;
try {
  // An optional dependency: the tests that need it are skipped where it is missing.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  unix = require('unix-dgram');
} catch {
  // an optional dependency: compiled at npm install where python3, make and g++ are
}
const withDgram = itWhen(unix ? {} : { 'unix-dgram': 'npm install with python3, make and g++ on the machine' }, 'systemd notify protocol');

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-notify-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A socket like systemd's NOTIFY_SOCKET, collecting each datagram with when it came. */
function notifySocket() {
  const file = path.join(dir, 'notify.sock');
  const messages: Array<{ at: number; text: string }> = [];
  const rx = unix!.createSocket('unix_dgram', (buf) => messages.push({ at: Date.now(), text: buf.toString() }));
  rx.bind(file);
  return { file, messages, close: () => rx.close() };
}

describe('SystemdNotifier', () => {
  it('is not made without NOTIFY_SOCKET', () => {
    expect(SystemdNotifier.fromEnv({}, capturingLogger().log)).toBeNull();
  });

  withDgram('READY=1 with the status and the pid; WATCHDOG=1 at half WATCHDOG_USEC until STOPPING=1', async () => {
    const socket = notifySocket();
    const notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: socket.file, WATCHDOG_USEC: '200000' }, capturingLogger().log)!;
    try {
      expect(notifier.watchdogMs).toBe(200);
      notifier.ready('listening on http://127.0.0.1:8080 (live mode)');
      await until(() => socket.messages.filter((m) => m.text === 'WATCHDOG=1').length >= 3, 2000);
      expect(socket.messages[0]?.text).toBe(`READY=1\nSTATUS=listening on http://127.0.0.1:8080 (live mode)\nMAINPID=${process.pid}`);
      const pings = socket.messages.filter((m) => m.text === 'WATCHDOG=1').map((m) => m.at);
      expect(nth(pings, 2) - nth(pings, 0)).toBeGreaterThanOrEqual(150); // every 100 ms, not faster
      notifier.status('draining');
      notifier.stopping('stopping (SIGTERM)');
      await until(() => socket.messages.some((m) => m.text.startsWith('STOPPING=1')));
      const count = socket.messages.length;
      await new Promise((r) => setTimeout(r, 250));
      expect(socket.messages.slice(count)).toEqual([]); // the watchdog stopped with it
      expect(socket.messages.slice(-2).map((m) => m.text)).toEqual(['STATUS=draining', 'STOPPING=1\nSTATUS=stopping (SIGTERM)']);
    } finally {
      notifier.close();
      socket.close();
    }
  });

  withDgram('no watchdog when WATCHDOG_PID names another process, or WATCHDOG_USEC is absent', () => {
    const socket = notifySocket();
    try {
      for (const env of [{ WATCHDOG_USEC: '200000', WATCHDOG_PID: String(process.pid + 1) }, {}]) {
        const n = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: socket.file, ...env }, capturingLogger().log)!;
        expect(n.watchdogMs).toBeNull();
        n.close();
      }
      const ours = SystemdNotifier.fromEnv(
        { NOTIFY_SOCKET: socket.file, WATCHDOG_USEC: '200000', WATCHDOG_PID: String(process.pid) },
        capturingLogger().log,
      )!;
      expect(ours.watchdogMs).toBe(200);
      ours.close();
    } finally {
      socket.close();
    }
  });

  withDgram('a socket nobody listens on: a warning naming it, at most once a minute', async () => {
    const { log, lines } = capturingLogger();
    const nowhere = path.join(dir, 'nobody.sock');
    const notifier = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: nowhere }, log)!;
    try {
      notifier.ready('up');
      notifier.status('still up');
      await until(() => lines.length > 0, 2000);
      await new Promise((r) => setTimeout(r, 50));
      expect(lines.map((l) => [l.level, l.msg])).toEqual([[40, `cannot notify systemd at ${nowhere}`]]);
    } finally {
      notifier.close();
    }
  });
});
