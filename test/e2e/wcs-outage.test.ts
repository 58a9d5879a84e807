// A WCS that stops for seconds while the sorter runs at a high rate. Its REQUESTs pile up; when it
// comes back it takes them oldest first (the queues are FIFO), each already past the sorter's
// decision window: every answer is late, every item goes round and asks again, and the line stays
// overloaded after the outage has ended (measured in docs/performance.md, "A WCS that stops").
// MaxRequestAgeSeconds, set a second below the sorter's decision window, takes such REQUESTs out of the queue
// (history: Expired): the line recovers within seconds and nothing is lost. Real processes: the
// emulator, the service, and the reference client, stopped and started again as a restarted WCS.
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator, startTarget } from '../../bench/processes';
import { projectRoot } from '../../lib/process/paths';
import { endBenchRun } from '../helpers/bench-run';

jest.setTimeout(90_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const RATE = 150;
const SECONDS = 30;
/** The WCS stops this long after the first REQUEST, and is back at OUTAGE_END_S. */
const OUTAGE_START_S = 6;
const OUTAGE_END_S = 14;

it('after an 8 s WCS outage at 150 items/s, with MaxRequestAgeSeconds 1: every item decided again within 7 s of its return, nothing lost', async () => {
  const emu = await startEmulator(RATE, SECONDS, 20);
  const t = await startTarget('service', emu.port, 0, { serviceRoot: projectRoot, serviceConfig: { MaxRequestAgeSeconds: 1 } });
  let client = runWcsClient({ base: t.base, loops: 4, timeOut: 1 });
  try {
    for (let i = 0; client.stats.requests === 0 && i < 3000; i++) await sleep(10);
    // The emulator counts its seconds from its first item; the first REQUEST reaches the client within milliseconds.
    const first = performance.now();
    const untilS = (s: number) => sleep(Math.max(0, first + s * 1000 - performance.now()));
    await untilS(OUTAGE_START_S);
    await client.stop();
    await untilS(OUTAGE_END_S);
    client = runWcsClient({ base: t.base, loops: 4, timeOut: 1 });
    const stats = await emu.stats;
    // The figures, for a run that fails.
    const { inducted, passes_without_assignment, last_pass_without_assignment_s, rejected } = stats;
    console.log(`wcs outage: ${JSON.stringify({ inducted, passes_without_assignment, last_pass_without_assignment_s, rejected })}`);
    // The outage bit: items passed their decision point without an assignment...
    expect(stats.passes_without_assignment).toBeGreaterThan(RATE * 3);
    // ...and none did once the WCS had been back a few seconds: on a quiet machine at once (13.3 s,
    // before it was back), with a fast suite beside this one on the 2 cores 1.8, 2.2 and 5.5 s
    // after (the backlog is worked off with the CPU there is; at 200 items/s one such run never
    // recovered). Without the setting the line does not recover while items come: the last pass
    // is at the run's end (32.8 s).
    expect(stats.last_pass_without_assignment_s).toBeLessThan(OUTAGE_END_S + 7);
    // Nothing lost: every item inducted left the sorter, diverted as assigned or rejected; every telegram acknowledged.
    expect(stats.sorted_as_assigned + stats.rejected).toBe(stats.inducted);
    expect(stats.unacknowledged_at_exit).toBe(0);
    const status = (await (await fetch(`${t.base}/status`)).json()) as { RequestsRemoved: { Expired: number } };
    expect(status.RequestsRemoved.Expired).toBeGreaterThan(0);
  } finally {
    await endBenchRun(client, t, emu);
  }
});
