// The slow-disk shim's stall mode (bench/slow-fsync.c, SORTER_FSYNC_STALL) in a real node process
// that syncs a file on tmpfs in a loop: the stalls come on schedule, last as long as asked, hold
// up the syncs that start behind them, and leave the other syncs as fast as they were.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { SyncCounter } from '../../bench/slow-disk';
import { nth } from '../helpers/nth';

const compiler = process.platform === 'linux' && spawnSync(process.env.CC ?? 'cc', ['--version']).status === 0;
if (!compiler) console.log('slow-fsync stall tests skipped: they need Linux (LD_PRELOAD) and a C compiler (cc)');
const linuxWithCc = compiler ? describe : describe.skip;

/** A sync as the child timed it: start and duration, ms since the child's start, and which loop made it. */
type Sync = { at: number; ms: number; loop: number };

/**
 * Run `loops` loops of write + fsync on one file for `seconds`, each loop its own chain of
 * fs.fsync calls (libuv's pool: as many threads syncing at once), in a child whose syncs stall.
 */
function syncLoops(loops: number, seconds: number, counter: SyncCounter): Sync[] {
  const dir = fs.existsSync('/dev/shm') ? '/dev/shm' : '/tmp';
  const child = `
    const fs = require('fs');
    const fd = fs.openSync(${JSON.stringify(`${dir}/slow-fsync-test-${process.pid}`)}, 'w');
    const t0 = performance.now(), syncs = [];
    const loop = (n) => {
      if (performance.now() - t0 >= ${seconds * 1000}) return;
      fs.writeSync(fd, 'x');
      const at = performance.now();
      // A millisecond between syncs: enough of them, without a busy core.
      fs.fsync(fd, () => { syncs.push({ at: at - t0, ms: performance.now() - at, loop: n }); setTimeout(loop, 1, n); });
    };
    for (let n = 0; n < ${loops}; n++) loop(n);
    process.on('exit', () => fs.writeSync(1, JSON.stringify(syncs)));
  `;
  const r = spawnSync(process.execPath, ['-e', child], { env: { ...process.env, ...counter.env }, encoding: 'utf8', maxBuffer: 1 << 28 });
  fs.rmSync(`${dir}/slow-fsync-test-${process.pid}`, { force: true });
  if (r.status !== 0) throw new Error(`the syncing child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Sync[];
}

linuxWithCc('SORTER_FSYNC_STALL', () => {
  let counter: SyncCounter | undefined;
  afterEach(() => counter?.dispose());

  it('300/1: one sync a second takes 300 ms longer, the others stay fast', () => {
    counter = new SyncCounter(0, undefined, { ms: 300, everyS: 1 });
    const syncs = syncLoops(1, 2.5, counter);
    const stalled = syncs.filter((s) => s.ms >= 300);
    const others = syncs.filter((s) => s.ms < 300);
    // 2.5 s of syncing from a moment shortly after the load: the stalls due 1 s and 2 s after it.
    expect(stalled.length).toBeGreaterThanOrEqual(2);
    expect(stalled.length).toBeLessThanOrEqual(3);
    expect(counter.read().stalls).toBe(stalled.length);
    // A stall starts the sync that finds it due, not later: about a second apart.
    const [firstStall, secondStall] = stalled;
    if (firstStall && secondStall) expect(Math.abs(secondStall.at - firstStall.at - 1000)).toBeLessThan(150);
    for (const s of stalled) expect(s.ms).toBeLessThan(600);
    expect(others.length).toBeGreaterThan(50);
    const sorted = others.map((s) => s.ms).sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(5);
    expect(counter.read().fsync).toBe(syncs.length);
  });

  it('500/1: a sync that starts during a stall ends no earlier than the stall', () => {
    counter = new SyncCounter(0, undefined, { ms: 500, everyS: 1 });
    const syncs = syncLoops(2, 1.7, counter);
    // The sync that started the stall is the earliest of those that took about its length.
    const first = nth(
      syncs.filter((s) => s.ms >= 490).sort((a, b) => a.at - b.at),
      0,
    );
    expect(counter.read().stalls).toBe(1);
    // Timed from the child's side, a sync starts before the shim sees it and ends after: the
    // stall's window begins at or after `first.at`, so it ends at or after `first.at + 500`.
    const behind = syncs.filter((s) => s !== first && s.at > first.at && s.at < first.at + 480);
    expect(behind.length).toBeGreaterThan(0);
    expect(behind.some((s) => s.loop !== first.loop)).toBe(true);
    for (const s of behind) expect(s.at + s.ms).toBeGreaterThanOrEqual(first.at + 500 - 1);
  });
});
