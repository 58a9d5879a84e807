// The fixed-size window of the latest items (lib/link/recent.ts): oldest first, the oldest dropped.
import { Recent } from '../../../lib/link/recent';

describe('Recent', () => {
  it('lists what it holds oldest first, before and after it wraps', () => {
    const r = new Recent<number>(3);
    expect(r.list()).toEqual([]);
    r.add(1);
    r.add(2);
    expect(r.list()).toEqual([1, 2]);
    r.add(3);
    expect(r.list()).toEqual([1, 2, 3]);
    r.add(4);
    r.add(5);
    expect(r.list()).toEqual([3, 4, 5]);
    for (let i = 6; i <= 10; i++) r.add(i);
    expect(r.list()).toEqual([8, 9, 10]);
  });

  it('gives a copy: changing the list changes nothing inside', () => {
    const r = new Recent<string>(2);
    r.add('a');
    r.list().push('x');
    expect(r.list()).toEqual(['a']);
  });
});
