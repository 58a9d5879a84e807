// The slow-disk settings the benchmark and the tests hand the shim: the stall's MS/EVERY_S.
import { parseSyncStall } from '../../bench/slow-disk';

describe('parseSyncStall', () => {
  it('reads MS/EVERY_S, decimals allowed', () => {
    expect(parseSyncStall('1000/10')).toEqual({ ms: 1000, everyS: 10 });
    expect(parseSyncStall(' 300 / 1.5 ')).toEqual({ ms: 300, everyS: 1.5 });
  });

  it('says what is wrong with anything else', () => {
    for (const bad of ['', '1000', '1000/', '/10', '0/10', '1000/0', '-5/10', '1000/10/2', 'a/b', '1e3/10']) {
      expect(parseSyncStall(bad)).toMatch(/^takes MS\/EVERY_S, two positive numbers .*e\.g\. 1000\/10; got /);
    }
  });

  it('refuses a stall as long as its period: the disk would never sync again', () => {
    expect(parseSyncStall('10000/10')).toMatch(/^takes a stall shorter than its period/);
    expect(parseSyncStall('9999/10')).toEqual({ ms: 9999, everyS: 10 });
  });
});
