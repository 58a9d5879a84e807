// systemd's service notification protocol (sd_notify(3)) for the Type=notify units in deploy/:
// READY=1 once the service listens, WATCHDOG=1 from the event loop, STATUS= lines, STOPPING=1.
import { ThrottledLog } from './log-throttle';
import type { Logger } from './logger';

/** The part of unix-dgram's socket used here (a datagram to a path). */
interface DatagramSocket {
  send(buf: Buffer, offset: number, length: number, path: string): void;
  on(event: 'error', listener: (err: Error) => void): void;
  close(): void;
}

/**
 * Tells systemd how the service is doing, over the datagram socket it names in NOTIFY_SOCKET.
 * Node has no Unix datagram sockets of its own; unix-dgram (an optional dependency, compiled at
 * install) gives them. The watchdog is fed by a timer on the main event loop at half the
 * interval systemd asks for (WATCHDOG_USEC): an event loop that hangs stops feeding it, and
 * systemd restarts the service.
 */
export class SystemdNotifier {
  private watchdog: NodeJS.Timeout | null = null;
  private readonly failed: ThrottledLog;

  private constructor(
    private readonly socket: DatagramSocket,
    private readonly path: string,
    /** How often systemd wants to hear from us (ms); null: no watchdog. */
    readonly watchdogMs: number | null,
    log: Logger,
  ) {
    this.failed = new ThrottledLog(log, 'warn', 60_000);
    socket.on('error', (err) => this.failed.write({ err }, `cannot notify systemd at ${path}`));
  }

  /** The notifier systemd asks for in the environment (NOTIFY_SOCKET), or null when it asks for none. */
  static fromEnv(env: NodeJS.ProcessEnv, log: Logger): SystemdNotifier | null {
    const target = env.NOTIFY_SOCKET;
    if (!target) return null;
    let unix: { createSocket(type: 'unix_dgram'): DatagramSocket };
    try {
      // An optional dependency, loaded only when systemd asks to be notified: it may be missing.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      unix = require('unix-dgram');
    } catch (err) {
      log.error(
        { err },
        'systemd asks to be notified (NOTIFY_SOCKET) but the optional module unix-dgram is not installed (it needs python3, make and g++ at npm install): reinstall with them, or use Type=exec in the unit',
      );
      return null;
    }
    const usec = Number(env.WATCHDOG_USEC);
    const forUs = !env.WATCHDOG_PID || Number(env.WATCHDOG_PID) === process.pid;
    // An abstract socket ("@name") is named with a leading NUL byte.
    const path = target.startsWith('@') ? `\0${target.slice(1)}` : target;
    return new SystemdNotifier(unix.createSocket('unix_dgram'), path, usec > 0 && forUs ? usec / 1000 : null, log);
  }

  /** The service is up: READY=1 with a status line, and the watchdog starts. */
  ready(status: string): void {
    this.send(`READY=1\nSTATUS=${status}\nMAINPID=${process.pid}`);
    if (this.watchdogMs !== null && !this.watchdog) {
      this.watchdog = setInterval(() => this.send('WATCHDOG=1'), Math.max(50, this.watchdogMs / 2));
      this.watchdog.unref();
    }
  }

  /** A status line for `systemctl status`. */
  status(text: string): void {
    this.send(`STATUS=${text}`);
  }

  /** Shutting down: STOPPING=1; the watchdog stops (the stop has its own time limit). */
  stopping(status: string): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    this.send(`STOPPING=1\nSTATUS=${status}`);
  }

  close(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.socket.close();
  }

  private send(message: string): void {
    const buf = Buffer.from(message);
    try {
      this.socket.send(buf, 0, buf.length, this.path);
    } catch (err) {
      this.failed.write({ err }, `cannot notify systemd at ${this.path}`);
    }
  }
}
