// HelperThreadNice: the real process's threads as the kernel sees them. The event loop, the writer
// and the checkpointer keep the process's priority; every other thread (V8's helpers, libuv's
// pool) is lowered, and a thread is never raised above where it was.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { THREAD_NAMES } from '../../lib/host/thread-name';

const linux = fs.existsSync('/proc/self/task');
if (!linux) console.log('thread-priority.test: no /proc/self/task (not Linux): skipped');
const onLinux = linux ? describe : describe.skip;

interface Thread {
  tid: number;
  name: string;
  nice: number;
}

/** The threads of `pid`: name (comm) and niceness (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadsOf(pid: number): Thread[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const dir = `/proc/${pid}/task/${tid}`;
    // Fields after "(comm) " start at field 3; the niceness is field 19.
    const fields = fs.readFileSync(`${dir}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return { tid: Number(tid), name: fs.readFileSync(`${dir}/comm`, 'utf8').trim(), nice: Number(fields[16]) };
  });
}

const ours = new Set<string>(Object.values(THREAD_NAMES));

onLinux('helper threads below the event loop and the writer', () => {
  it('by default: the event loop, the writer and the checkpointer at the process priority, every other thread at 19', async () => {
    const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: 0 }) });
    const svc = await startServiceProcess(home);
    try {
      // Some traffic first: threads started by work after the start (none should be) would show here.
      for (let i = 0; i < 5; i++) await (await fetch(`${svc.base}/sortation?timeOut=0`)).arrayBuffer();
      const threads = threadsOf(svc.proc.pid!);
      const main = threads.find((t) => t.tid === svc.proc.pid)!;
      expect(main.nice).toBe(0);
      for (const name of ours) expect(threads.filter((t) => t.name === name).map((t) => t.nice)).toEqual([0]);
      const helpers = threads.filter((t) => t.tid !== svc.proc.pid && !ours.has(t.name));
      // V8's platform workers (Node's 4, or --v8-pool-size, as the launcher may choose: the service's
      // start-up line names its options) at least, and libuv's pool of 4 (started before the lowering).
      const options = svc.logs.find((l) => 'nodeOptions' in l)?.nodeOptions as string[] | undefined;
      expect(options).toBeDefined();
      const pool = Number(options?.find((o) => o.startsWith('--v8-pool-size='))?.slice('--v8-pool-size='.length) ?? 4);
      expect(helpers.length).toBeGreaterThanOrEqual(pool + 4);
      expect(helpers.filter((t) => t.nice !== 19)).toEqual([]);
    } finally {
      await svc.stop('SIGTERM');
      removeHome(home);
    }
  });

  it('HelperThreadNice 0 leaves every thread at the process priority', async () => {
    const home = tempHome({ 'config.json': JSON.stringify({ TestMode: true, Port: 0, HelperThreadNice: 0 }) });
    const svc = await startServiceProcess(home);
    try {
      const threads = threadsOf(svc.proc.pid!);
      expect(threads.length).toBeGreaterThanOrEqual(8);
      expect(threads.filter((t) => t.nice !== 0)).toEqual([]);
    } finally {
      await svc.stop('SIGTERM');
      removeHome(home);
    }
  });

  it('a process started nicer keeps its niceness where it is higher, and the calling thread is never touched', () => {
    const module = path.join(__dirname, '../../dist/lib/process/thread-priority.js');
    const script = `
      const { lowerHelperThreads, currentThreadId } = require(${JSON.stringify(module)});
      const os = require('os'), fs = require('fs');
      const nices = () => fs.readdirSync('/proc/self/task').map((t) => [Number(t), os.getPriority(Number(t))]);
      const off = lowerHelperThreads(0);
      const kept = lowerHelperThreads(3);
      const afterKept = nices();
      const lowered = lowerHelperThreads(12);
      console.log(JSON.stringify({ self: currentThreadId(), pid: process.pid, off, kept, afterKept, lowered, after: nices() }));`;
    const run = spawnSync('nice', ['-n', '5', process.execPath, '-e', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const r = JSON.parse(run.stdout) as {
      self: number;
      pid: number;
      off: object;
      kept: { lowered: number; already: number; failed: number };
      afterKept: number[][];
      lowered: { lowered: number; already: number; failed: number };
      after: number[][];
    };
    expect(r.self).toBe(r.pid);
    expect(r.off).toEqual({ lowered: 0, already: 0, failed: 0 });
    const others = r.afterKept.length - 1;
    expect(r.kept).toEqual({ lowered: 0, already: others, failed: 0 });
    expect(r.afterKept.every(([, nice]) => nice === 5)).toBe(true);
    expect(r.lowered).toEqual({ lowered: others, already: 0, failed: 0 });
    expect(r.after.filter(([tid]) => tid !== r.pid).every(([, nice]) => nice === 12)).toBe(true);
    expect(r.after.find(([tid]) => tid === r.pid)![1]).toBe(5);
  });
});
