import { collectorLine, collectorOf } from '../../../lib/process/collector';

describe("the start-up line naming V8's collector", () => {
  it('names the collector from the options Node was started with', () => {
    expect(collectorOf(['--max-semi-space-size=2', '--single-threaded-gc'])).toBe('single-threaded');
    expect(collectorOf(['--single_threaded_gc'])).toBe('single-threaded');
    expect(collectorOf(['--max-semi-space-size=2', '--v8-pool-size=1'])).toBe('helpers');
    expect(collectorOf(['--v8-pool-size', '2'])).toBe('helpers');
    expect(collectorOf(['--single-threaded-gc-in-background'])).toBe('default');
    expect(collectorOf([])).toBe('default');
  });

  it("says why from the launcher's SORTER_COLLECTOR_WHY, and that it was not used where it is absent", () => {
    const launched = collectorLine(['--max-semi-space-size=2', '--v8-pool-size=1'], { SORTER_COLLECTOR_WHY: 'auto: 2 CPUs, no CPU quota' });
    expect(launched).toEqual({
      fields: { collector: 'helpers', why: 'auto: 2 CPUs, no CPU quota', nodeOptions: ['--max-semi-space-size=2', '--v8-pool-size=1'] },
      message: "V8's collector: helpers (auto: 2 CPUs, no CPU quota); node options: --max-semi-space-size=2 --v8-pool-size=1",
    });
    expect(collectorLine([], { SORTER_COLLECTOR_WHY: ' ' }).message).toBe(
      "V8's collector: default (node started without bin/sorter-integration); node options: none",
    );
  });
});
