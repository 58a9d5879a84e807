// The benchmark's CPU split by thread (bench/processes.ts, threadCpuMs): a thread named as the
// service names its writer is counted as the writer, the process's own thread as main, and the
// parts add up to the process's CPU. Real threads, read from /proc (Linux).
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { cpuMs, threadCpuMs } from '../../bench/processes';
import { THREAD_NAMES } from '../../lib/host/thread-name';

const linux = fs.existsSync('/proc/self/task');
if (!linux) console.log('thread-cpu: skipped, no /proc (not Linux)');
const maybe = linux ? it : it.skip;

// A thread that names itself, spends `ms` of its own CPU (read from /proc, not the clock), says so and waits.
const burner = (name: string, ms: number) => `
  const fs = require('node:fs');
  const { parentPort } = require('node:worker_threads');
  fs.writeFileSync('/proc/thread-self/comm', ${JSON.stringify(name)});
  const own = () => {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms
  };
  while (own() < ${ms}) for (let i = 0; i < 1e5; i++);
  parentPort.postMessage('done');
  setInterval(() => {}, 1000);
`;

maybe('counts a thread named as the writer as the writer, and the parts add up to the process', async () => {
  const before = threadCpuMs(process.pid);
  const totalBefore = cpuMs(process.pid);
  const worker = new Worker(burner(THREAD_NAMES.writer, 300), { eval: true });
  try {
    await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    const after = threadCpuMs(process.pid);
    const total = cpuMs(process.pid) - totalBefore;
    expect(before).not.toBeNull();
    expect(after).not.toBeNull();
    if (!before || !after) return;
    expect(after.writer - before.writer).toBeGreaterThanOrEqual(300);
    // Not as the checkpoint thread: a checkpoint thread an earlier test file left in this Jest worker
    // (still ending) may add a tick of its own, the burner would add its 300 ms.
    expect(after.checkpoint - before.checkpoint).toBeLessThan(100);
    expect(after.main).toBeGreaterThan(0);
    // Over the same window (the process's own figure also keeps the time of threads that ended
    // before it, such as earlier tests' workers), read a moment apart: a few ticks.
    const sum =
      after.main + after.writer + after.checkpoint + after.other - (before.main + before.writer + before.checkpoint + before.other);
    expect(Math.abs(total - sum)).toBeLessThanOrEqual(100);
  } finally {
    await worker.terminate();
  }
});

maybe('gives null for a process that is not there', () => {
  expect(threadCpuMs(2 ** 22 + 12345)).toBeNull();
});
