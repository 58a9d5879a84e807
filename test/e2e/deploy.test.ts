// Deployment on an edge box (deploy/, docs/operations.md): the systemd units pass
// `systemd-analyze verify`; the service speaks systemd's notify protocol to a real Unix datagram
// socket (READY, a watchdog fed from its event loop, STOPPING); a backup with `sqlite3 .backup`
// taken while it runs under load is a whole, consistent database.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import Database from '../../db/sqlite';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { itWhen, missingCommands } from '../helpers/tools';
import { until } from '../helpers/until';
import { killAtFileEnd } from '../helpers/children';

jest.setTimeout(60_000);
const DEPLOY = path.join(__dirname, '../../deploy');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the systemd units', () => {
  const units = ['sorter-integration.service', 'sorter-integration@.service'] as const;

  itWhen(missingCommands({ 'systemd-analyze': 'apt-get install systemd' }), 'the systemd units')(
    'pass systemd-analyze verify, the template as an instance too, with no warning',
    () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-units-'));
      // The units run the launcher installed under /opt/sorter-integration, which systemd checks is
      // there and executable: verify the same unit with this checkout's, so that the check is about
      // the unit, not the machine.
      const launcher = path.resolve(__dirname, '../../bin/sorter-integration');
      for (const [from, to] of [
        [units[0], units[0]],
        [units[1], 'sorter-integration@line1.service'],
      ] as const) {
        const text = fs.readFileSync(path.join(DEPLOY, from), 'utf8');
        fs.writeFileSync(
          path.join(dir, to),
          text.replace('ExecStart=/opt/sorter-integration/bin/sorter-integration', `ExecStart=${launcher}`),
        );
      }
      const r = spawnSync('systemd-analyze', ['verify', path.join(dir, units[0]), path.join(dir, 'sorter-integration@line1.service')], {
        encoding: 'utf8',
      });
      expect(r.error).toBeUndefined();
      expect(`${r.stdout}${r.stderr}`).toBe('');
      expect(r.status).toBe(0);
      fs.rmSync(dir, { recursive: true });
    },
  );

  it.each(units)(
    '%s: notify with a watchdog, restart always, a dedicated user, its state under /var/lib, hardened, the journal',
    (unit) => {
      const text = fs.readFileSync(path.join(DEPLOY, unit), 'utf8');
      const instance = unit.includes('@') ? '/%i' : '';
      for (const line of [
        'Type=notify',
        'NotifyAccess=main',
        /^WatchdogSec=\d+$/m,
        'Restart=always',
        'RestartPreventExitStatus=75 78',
        'User=sorter-integration',
        `StateDirectory=sorter-integration${instance}`,
        `Environment=SORTER_HOME=/var/lib/sorter-integration${instance}`,
        'ExecStart=/opt/sorter-integration/bin/sorter-integration',
        'Environment=NODE=/usr/bin/node',
        'NoNewPrivileges=yes',
        'ProtectSystem=strict',
        'ProtectHome=yes',
        'PrivateTmp=yes',
        'CapabilityBoundingSet=',
        'StandardOutput=journal',
      ]) {
        if (typeof line === 'string') expect(text.split('\n')).toContain(line);
        else expect(text).toMatch(line);
      }
      // The service's own stop limit (20 s) fits within the unit's.
      expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(text)![1])).toBeGreaterThan(20);
      // What ExecStart runs: the launcher, executable, and what `npm run build` makes, which it starts.
      expect(fs.statSync(path.join(__dirname, '../../bin/sorter-integration')).mode & 0o111).toBe(0o111);
      expect(fs.existsSync(path.join(__dirname, '../../dist/lib/main.js'))).toBe(true);
    },
  );
});

describe('systemd notify protocol', () => {
  /** A Unix datagram socket like systemd's NOTIFY_SOCKET (python3's socket module), printing each message. */
  function notifySocket(file: string): Promise<{ proc: ChildProcess; messages: Array<{ at: number; text: string }> }> {
    // SO_TIMESTAMP (29 on Linux): the kernel stamps each datagram as it is sent, so a receiver that
    // reads late on a busy machine still reports when the service sent it.
    const script = [
      'import socket, struct',
      's = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)',
      's.setsockopt(socket.SOL_SOCKET, 29, 1)',
      `s.bind(${JSON.stringify(file)})`,
      'print("bound", flush=True)',
      'while True:',
      '    m, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16))',
      '    sec, usec = struct.unpack("qq", anc[0][2][:16])',
      '    print("%d %s" % (sec * 1000 + usec // 1000, m.decode().replace("\\n", "|")), flush=True)',
    ].join('\n');
    const proc = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    killAtFileEnd(proc);
    const messages: Array<{ at: number; text: string }> = [];
    return new Promise((resolve) => {
      readline
        .createInterface({ input: proc.stdout! })
        // Each message with the time the kernel took it from the service (this process may read the pipe later on a busy machine).
        .on('line', (line) => {
          if (line === 'bound') return resolve({ proc, messages });
          const space = line.indexOf(' ');
          messages.push({ at: Number(line.slice(0, space)), text: line.slice(space + 1) });
        });
    });
  }

  itWhen(
    missingCommands({ python3: 'apt-get install python3' }),
    'systemd notify protocol (a python3 datagram socket stands in for systemd)',
  )('READY=1 once listening, WATCHDOG=1 from the event loop (none while it is stopped), STOPPING=1 on SIGTERM', async () => {
    const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' } });
    const file = path.join(home, 'notify.sock');
    const { proc: receiver, messages } = await notifySocket(file);
    try {
      const svc = await startServiceProcess(home, { NOTIFY_SOCKET: file, WATCHDOG_USEC: '300000' });
      await until(() => messages.some((m) => m.text.startsWith('READY=1')), 5000, 'READY=1');
      const ready = messages.find((m) => m.text.startsWith('READY=1'))!;
      // Every 150 ms (half of WATCHDOG_USEC): about six in the second after READY.
      const pings = () => messages.filter((m) => m.text === 'WATCHDOG=1');
      await until(() => messages.some((m) => m.at > ready.at + 1000), 5000, 'a message a second after READY=1');
      expect(ready.text).toMatch(
        new RegExp(`^READY=1\\|STATUS=listening on http://127\\.0\\.0\\.1:${svc.port} \\(test mode\\)\\|MAINPID=${svc.proc.pid}$`),
      );
      expect(pings().filter((m) => m.at <= ready.at + 1000).length).toBeGreaterThanOrEqual(4);

      // An event loop that does not run does not feed the watchdog (systemd would restart it). Each
      // message carries the kernel's send time, not the time the receiver got to read it (a
      // receiver's own clock once put a ping sent before the stop 300 ms into it on a busy CI
      // machine); the first 100 ms of the stop are left for the signal to take hold, and 1.4 s of
      // it (9 intervals) must have none.
      svc.proc.kill('SIGSTOP');
      const stoppedAt = Date.now();
      await sleep(1500);
      // Stamped before the signal: the service may send its first ping before this process runs again.
      const resumedAt = Date.now();
      svc.proc.kill('SIGCONT');
      await until(() => pings().some((m) => m.at > resumedAt), 5000, 'a WATCHDOG=1 after SIGCONT');
      expect(pings().filter((m) => m.at > stoppedAt + 100 && m.at < resumedAt).length).toBe(0);

      expect(await svc.stop('SIGTERM')).toBe(0);
      await until(() => messages.some((m) => m.text === 'STOPPING=1|STATUS=stopping (SIGTERM)'), 5000, 'STOPPING=1');
    } finally {
      receiver.kill();
      removeHome(home);
    }
  });

  it('without NOTIFY_SOCKET, nothing is sent and nothing is logged about systemd', async () => {
    const home = tempHome({ 'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1', LogLevel: 'info' } });
    const svc = await startServiceProcess(home);
    expect(await svc.stop()).toBe(0);
    expect(svc.logs.filter((l) => /systemd/.test(String(l.msg)))).toEqual([]);
    removeHome(home);
  });
});

describe('backup while running', () => {
  itWhen(missingCommands({ sqlite3: 'apt-get install sqlite3' }), 'backup while running')(
    'sqlite3 .backup under load gives a whole database: integrity ok, the schema, the rows committed before it',
    async () => {
      const emu = await startEmulator(['--port', '0', '--rate', '40', '--seed', '5', '--duration', '8']);
      const home = tempHome({
        'config.json': { TestMode: false, Port: 0, Host: '127.0.0.1', Sorter: { Host: '127.0.0.1', Port: emu.port } },
      });
      const svc = await startServiceProcess(home);
      const client = runWcsClient({ base: svc.base, loops: 2, timeOut: 1 });
      await sleep(3000);
      const db = path.join(home, 'data/sorter.db');
      const backup = path.join(home, 'backup.db');
      const live = new Database(db, { readonly: true });
      const before = (live.prepare('SELECT count(*) AS n FROM delivered_history').get() as { n: number }).n;
      live.close();
      // As docs/operations.md says to, while the service keeps writing.
      execFileSync('sqlite3', [db, `.backup '${backup}'`]);
      await emu.stats;
      await client.stop();
      await svc.stop();

      const copy = new Database(backup, { readonly: true });
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.pragma('user_version', { simple: true })).toBeGreaterThan(0);
      expect((copy.prepare('SELECT count(*) AS n FROM delivered_history').get() as { n: number }).n).toBeGreaterThanOrEqual(before);
      expect(before).toBeGreaterThan(0);
      copy.close();
      removeHome(home);
    },
  );
});
