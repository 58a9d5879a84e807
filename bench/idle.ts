// The benchmark's idle probe: the service with its sorter connected and nothing to sort, and a WCS
// waiting in long polls. What it costs then is what an edge box pays all night.
import { runWcsClient } from '../examples/wcs-client';
import { type Throttling, throttlingBetween } from './cpu-limit';
import { type TargetOptions, cpuMs, disposeTarget, pidOf, rssMb, sleep, startEmulator, startTarget, threadCount } from './processes';

/** What the idle service used: CPU as a percentage of one core, its threads and its memory. */
export interface IdleResult {
  seconds: number;
  cpuPct: number;
  threads: number;
  rssMb: number;
  peakRssMb: number;
  /** The cgroup's periods and those it was held back in while measured (`--service-cpu`; null: unlimited). */
  throttling: Throttling | null;
  /** The options Node ran with (the launcher's choice, or `--service-node-args`). */
  nodeArgs: string[] | null;
}

/**
 * Seconds after the start before measuring: the start-up's compiling, first checkpoint and
 * reconnects are not idling, and V8 goes on collecting the start-up's garbage for about 20 s
 * (measured with test/e2e/idle.test.ts: 1.1% of a core over the 15 s after a 5 s wait, 0.1% after 25 s).
 */
const SETTLE_S = 25;
/** The longest long poll the API allows (seconds): the client asks again as seldom as it can. */
const POLL_TIMEOUT_S = 30;

/**
 * The service with the emulator connected at 0 items/s (the link's LIFE telegrams still flow both
 * ways) and the reference client's two loops (sortation and destination) in long polls, for
 * `seconds` after a settling time. With `cpuLimit` (`--service-cpu`) the service idles in that cgroup,
 * started through the launcher there, as a slow box runs it.
 */
export async function idleProbe(options: TargetOptions, seconds: number): Promise<IdleResult> {
  const emu = await startEmulator(0, SETTLE_S + seconds + 30, 1, 0, options.layout);
  const t = await startTarget('service', emu.port, 0, options);
  const pid = pidOf(t.proc);
  const client = runWcsClient({ base: t.base, loops: 1, timeOut: POLL_TIMEOUT_S });
  try {
    await sleep(SETTLE_S * 1000);
    let peakRssMb = 0;
    const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 500);
    const cpu0 = cpuMs(pid);
    const throttling0 = options.cpuLimit?.throttling();
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const cpuPct = ((cpuMs(pid) - cpu0) / (performance.now() - t0)) * 100;
    const throttling1 = options.cpuLimit?.throttling();
    clearInterval(sampler);
    const rss = rssMb(pid);
    return {
      seconds,
      cpuPct: Math.round(cpuPct * 100) / 100,
      threads: threadCount(pid),
      rssMb: Math.round(rss),
      peakRssMb: Math.round(Math.max(peakRssMb, rss)),
      throttling: throttlingBetween(throttling0, throttling1),
      nodeArgs: t.nodeArgs ?? null,
    };
  } finally {
    // The long polls end when the service does: stop the client first, or it would ask again.
    const stopped = client.stop();
    t.proc.kill('SIGTERM');
    await new Promise((r) => t.proc.once('exit', r));
    await stopped;
    emu.proc.kill('SIGTERM');
    await emu.stats.catch(() => undefined);
    disposeTarget(t);
  }
}
