// The benchmark's CPU by thread in windows (bench/thread-timeline.ts, `--thread-timeline`): a real
// child whose main thread and a thread named as the service's writer are busy, read from /proc.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TIMELINE_HEADER, startThreadTimeline } from '../../bench/thread-timeline';
import { sleep } from '../../bench/processes';
import { THREAD_NAMES } from '../../lib/host/thread-name';
import { describeWhen } from '../helpers/tools';

// The main thread spins; a worker names itself as the writer, then waits for its turn and spins.
const CHILD = `
const { Worker } = require('node:worker_threads');
new Worker(\`
  require('node:fs').writeFileSync('/proc/thread-self/comm', '${THREAD_NAMES.writer}');
  const start = Date.now();
  while (Date.now() - start < 600) {}
  for (;;) { const t = Date.now(); while (Date.now() - t < 50) {} }
\`, { eval: true });
const end = Date.now() + 30000;
while (Date.now() < end) {}
`;

const schedstat: Record<string, string> = fs.existsSync('/proc/self/schedstat') ? {} : { '/proc/<pid>/schedstat': 'Linux with schedstats' };
const withSchedstat = describeWhen(schedstat, 'the thread timeline');

withSchedstat('startThreadTimeline', () => {
  it('reads the threads from when the run begins, window by window, and writes them as CSV', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-timeline-'));
    const child = spawn(process.execPath, ['-e', CHILD], { stdio: 'ignore' });
    try {
      let begun = false;
      const file = path.join(dir, '001-service-30-threads.csv');
      const timeline = startThreadTimeline(child.pid!, () => begun, file, 100);
      await sleep(300);
      // Nothing is read before the run begins (the first item): no row covers the start.
      begun = true;
      await sleep(1050);
      const rows = timeline.stop();
      expect(rows.length).toBeGreaterThanOrEqual(8);
      expect(rows[0]!.fromS).toBe(0);
      for (const r of rows) {
        expect(r.windowMs).toBeGreaterThan(50);
        // The spinning main thread runs most of each window (two cores here, shared); never more than it lasted.
        expect(r.cpu.main).toBeGreaterThan(r.windowMs * 0.3);
        expect(r.cpu.main).toBeLessThanOrEqual(r.windowMs + 5);
        expect(r.cpu.checkpoint).toBe(0);
      }
      // The worker counts as the writer once it has named itself, and spins.
      const writerMs = rows.reduce((sum, r) => sum + r.cpu.writer, 0);
      expect(writerMs).toBeGreaterThan(200);
      const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
      expect(lines[0]).toBe(TIMELINE_HEADER);
      expect(lines).toHaveLength(rows.length + 1);
      expect(lines[1]!.split(',').map(Number)).toEqual([
        0,
        rows[0]!.windowMs,
        rows[0]!.cpu.main,
        rows[0]!.cpu.writer,
        0,
        rows[0]!.cpu.other,
      ]);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends its rows when the process has ended, and writes what it has', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-timeline-'));
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 400)'], { stdio: 'ignore' });
    try {
      const file = path.join(dir, 'ended.csv');
      const timeline = startThreadTimeline(child.pid!, () => true, file, 100);
      await new Promise((r) => child.once('exit', r));
      await sleep(400);
      const rows = timeline.stop();
      expect(rows.length).toBeGreaterThanOrEqual(1);
      expect(rows.length).toBeLessThanOrEqual(6);
      expect(fs.readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(rows.length + 1);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
