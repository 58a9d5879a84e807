// Keys given twice in one JSON object, found in the text (JSON.parse keeps the last silently).
import fc from 'fast-check';
import { duplicateKeys } from '../../../lib/process/json-keys';

describe('duplicateKeys', () => {
  it('finds a key given twice in the same object, with the path of that object', () => {
    expect(duplicateKeys('{"a":1,"b":{"c":1,"c":2},"a":3}')).toEqual([
      { path: 'b', key: 'c' },
      { path: '', key: 'a' },
    ]);
    expect(duplicateKeys('{"list":[{"k":1},{"k":2,"k":3}]}')).toEqual([{ path: 'list[]', key: 'k' }]);
  });

  it('tells keys from strings: quotes, colons and escapes inside values, the same key in sibling objects', () => {
    expect(duplicateKeys('{"a":"x\\":\\"a\\":","b":[{"a":1},{"a":2}],"c":{"a":1}}')).toEqual([]);
    expect(duplicateKeys('{"\\u0041":1,"A":2}')).toEqual([{ path: '', key: 'A' }]); // the same key, spelled with an escape
    expect(duplicateKeys('[1,"a",{"x":1} , {"x" : 2 , "x":3}]')).toEqual([{ path: '[]', key: 'x' }]);
  });

  it('finds nothing in any JSON that JSON.stringify wrote (no key can repeat there)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        // JSON.stringify gives undefined for undefined (its type says string).
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        expect(duplicateKeys(JSON.stringify(v) ?? 'null')).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });
});
