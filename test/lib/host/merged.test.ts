import { merged } from '../../../lib/host/merged';

describe('merged (an object built from parts without an extended spread)', () => {
  it("gives base's properties and then more's, as { ...base, ...more } does, in a new object", () => {
    const base = { a: 1, b: 'x', c: null as string | null };
    const out = merged(base, { c: 'y', d: 2 });
    expect(out).toEqual({ ...base, ...{ c: 'y', d: 2 } });
    expect(Object.keys(out)).toEqual(['a', 'b', 'c', 'd']);
    expect(out).not.toBe(base);
    expect(base).toEqual({ a: 1, b: 'x', c: null }); // the base is left as it was
  });

  it('copies own enumerable properties only, as a spread does', () => {
    const proto = { inherited: true };
    const base = Object.create(proto, { own: { value: 1, enumerable: true }, hidden: { value: 2, enumerable: false } }) as object;
    expect(merged(base, { more: 3 })).toEqual({ own: 1, more: 3 });
  });
});
