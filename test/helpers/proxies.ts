// Test helper: nginx and HAProxy on loopback in front of a service, from the shipped example
// configurations in deploy/ (only the addresses replaced), or nginx with its defaults.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { killAtFileEnd } from './children';
import { freePort } from './net';

const DEPLOY = path.resolve(__dirname, '../../deploy');

/** A proxy process listening on `port`. */
export interface Proxy {
  port: number;
  base: string;
  stop(): Promise<void>;
}

/** nginx's `proxy_pass` with nothing else set: HTTP/1.0 and a new connection per request. */
export const nginxDefaults = (servicePort: number) =>
  `server {\n  listen 8080;\n  location / { proxy_pass http://127.0.0.1:8081; }\n}\n`.replace('127.0.0.1:8081', `127.0.0.1:${servicePort}`);

/** The shipped deploy/nginx/sorter-integration.conf. */
export const nginxShipped = () => fs.readFileSync(path.join(DEPLOY, 'nginx/sorter-integration.conf'), 'utf8');

/** nginx with `site` (a server block listening on 8080, its upstream at 127.0.0.1:8081) in front of the service. */
export async function startNginx(site: string, servicePort: number): Promise<Proxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-nginx-'));
  const port = await freePort();
  fs.writeFileSync(
    path.join(dir, 'site.conf'),
    site.replace('127.0.0.1:8081', `127.0.0.1:${servicePort}`).replace(/listen 8080;/, `listen 127.0.0.1:${port};`),
  );
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join(' ');
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;\nmaster_process off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\nevents { worker_connections 512; }\nhttp { access_log off; ${temp}\n  include ${dir}/site.conf;\n}\n`,
  );
  return start(spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] }), port, dir);
}

/** HAProxy with a shipped configuration (deploy/haproxy/haproxy.cfg, HTTP mode, or haproxy-tcp.cfg) in front of the service. */
export async function startHaproxy(servicePort: number, file: 'haproxy.cfg' | 'haproxy-tcp.cfg' = 'haproxy.cfg'): Promise<Proxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-haproxy-'));
  const port = await freePort();
  const cfg = fs
    .readFileSync(path.join(DEPLOY, 'haproxy', file), 'utf8')
    .replace('bind :8080', `bind 127.0.0.1:${port}`)
    .replace('127.0.0.1:8081', `127.0.0.1:${servicePort}`);
  fs.writeFileSync(path.join(dir, 'haproxy.cfg'), cfg);
  return start(spawn('haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] }), port, dir);
}

async function start(proc: ChildProcess, port: number, dir: string): Promise<Proxy> {
  killAtFileEnd(proc);
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  for (const end = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 50))) {
    if (proc.exitCode !== null) throw new Error(`proxy exited (${proc.exitCode}): ${stderr}`);
    if (await listening(port)) break;
    if (Date.now() > end) throw new Error(`proxy not listening on ${port} after 10 s: ${stderr}`);
  }
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
