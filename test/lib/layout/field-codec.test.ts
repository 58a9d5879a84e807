// One field as bytes and back (lib/layout/codec.ts), by kind, on fields made here:
// padding and alignment, scales, maps both ways, constants, and values refused (not cut) naming
// the field, a NAK's text excepted.
import { TelegramError } from '../../../bench/v1-codec';
import { type FieldRules, decodeField, encodeField, unpadded, writeField } from '../../../lib/layout/codec';
import type { Field } from '../../../lib/layout/table';

const rules: FieldRules = { charset: 'ascii', text: /^[\x20-\x7e]*$/, forbidden: null, binary: false };
const field = (over: Partial<Field>): Field => ({
  name: 'F',
  kind: 'text',
  offset: 0,
  width: 4,
  align: 'left',
  fill: 0x20,
  required: false,
  scale: null,
  map: null,
  reverse: null,
  constant: null,
  counts: 'telegram',
  cut: false,
  ...over,
});
const roundTrip = (f: Field, value: unknown, r = rules) => {
  const bytes = encodeField(r, f, value);
  return { wire: bytes.toString('latin1'), back: decodeField(r, f, bytes) };
};

describe('encodeField and decodeField', () => {
  it('pads text to its side and reads it back without the padding; a required blank is refused', () => {
    expect(roundTrip(field({}), 'AB')).toEqual({ wire: 'AB  ', back: 'AB' });
    expect(roundTrip(field({ align: 'right', fill: 0x2e }), 'AB')).toEqual({ wire: '..AB', back: 'AB' });
    expect(() => decodeField(rules, field({ required: true }), Buffer.from('    '))).toThrow('F: ');
  });

  it('writes numbers zero-filled, scaled by 10^Scale, and reads them back as numbers', () => {
    const int = field({ kind: 'int', align: 'right', fill: 0x30 });
    expect(roundTrip(int, 42)).toEqual({ wire: '0042', back: 42 });
    expect(roundTrip(field({ kind: 'decimal', align: 'right', fill: 0x30, scale: 2 }), 1.5)).toEqual({ wire: '0150', back: 1.5 });
    expect(roundTrip(field({ kind: 'decimal', align: 'right', fill: 0x30, width: 5 }), 1.25)).toEqual({ wire: '01.25', back: 1.25 });
    expect(roundTrip(field({ kind: 'bin', width: 2, scale: 3 }), 1.234)).toEqual({ wire: '\x04\xd2', back: 1.234 });
  });

  it('maps enum and bin values both ways; a blank optional enum is null', () => {
    const map = new Map<string, string | null>([
      ['1', 'On'],
      ['2', 'Off'],
    ]);
    const reverse = new Map<string | null, string>([
      ['On', '1'],
      ['Off', '2'],
    ]);
    expect(roundTrip(field({ kind: 'enum', width: 1, map, reverse }), 'Off')).toEqual({ wire: '2', back: 'Off' });
    expect(roundTrip(field({ kind: 'enum', width: 1, map, reverse }), null)).toEqual({ wire: ' ', back: null });
    expect(roundTrip(field({ kind: 'bin', width: 1, map, reverse }), 'On')).toEqual({ wire: '\x01', back: 'On' });
  });

  it('writes a fixed field as its constant, checks it on the way back, and a spare field as fill', () => {
    const fixed = field({ kind: 'fixed', width: 2, constant: Buffer.from('XY') });
    expect(roundTrip(fixed, undefined)).toEqual({ wire: 'XY', back: undefined });
    expect(() => decodeField(rules, fixed, Buffer.from('XZ'))).toThrow(/the constant XY/);
    expect(roundTrip(field({ kind: 'spare' }), 'ignored')).toEqual({ wire: '    ', back: undefined });
  });

  it('refuses what does not fit, naming the field, instead of cutting it', () => {
    const bad: [Field, unknown, RegExp][] = [
      [field({}), 'ABCDE', /^F: .*at most 4 characters/],
      [field({}), 'AB ', /no trailing space/],
      [field({}), 'Ä', /printable ASCII/],
      [field({ kind: 'int', align: 'right', fill: 0x30 }), 10000, /at most 4 characters/],
      [field({ kind: 'int', align: 'right', fill: 0x30 }), 1.5, /a non-negative integer/],
      [field({ kind: 'decimal', align: 'right', fill: 0x30, scale: 1 }), 1.25, /at most 1 decimals/],
      [field({ kind: 'bin', width: 1 }), 256, /at most 255 \(1 bytes\)/],
      [field({ kind: 'enum', width: 1, required: true, map: new Map([['1', 'On']]), reverse: new Map([['On', '1']]) }), null, /one of On/],
    ];
    for (const [f, value, message] of bad) {
      expect(() => encodeField(rules, f, value)).toThrow(TelegramError);
      expect(() => encodeField(rules, f, value)).toThrow(message);
    }
    expect(() => encodeField({ ...rules, forbidden: Buffer.from('#') }, field({}), 'A#')).toThrow(/it ends a telegram/);
  });

  it('cuts a diagnostic (a NAK text) to its field instead, its odd characters and the end character replaced', () => {
    const text = field({ width: 6, cut: true });
    expect(encodeField({ ...rules, forbidden: Buffer.from('#') }, text, 'a#b\x01cdefgh').toString('latin1')).toBe('a?b?cd');
    expect(encodeField(rules, text, 'ab   ').toString('latin1')).toBe('ab    ');
  });
});

describe('writeField', () => {
  it('writes the bytes encodeField gives into a telegram at the field, and nothing outside it', () => {
    const cases: [Field, unknown][] = [
      [field({}), 'AB'],
      [field({ align: 'right', fill: 0x2e }), 'AB'],
      [field({ align: 'right', fill: 0x2e }), ''],
      [field({ kind: 'int', align: 'right', fill: 0x30 }), 42],
      [field({ kind: 'bin', width: 2 }), 513],
      [field({ kind: 'enum', width: 1, map: new Map([['1', 'On']]), reverse: new Map([['On', '1']]) }), 'On'],
      [field({ kind: 'fixed', width: 2, constant: Buffer.from('XY') }), undefined],
      [field({ kind: 'spare' }), 'ignored'],
    ];
    for (const [f, value] of cases) {
      const out = Buffer.alloc(f.width + 6, '#');
      writeField(rules, f, value, out, 3);
      expect(out.subarray(3, 3 + f.width)).toEqual(encodeField(rules, f, value));
      expect(out.subarray(0, 3).toString('latin1') + out.subarray(3 + f.width).toString('latin1')).toBe('######');
    }
  });

  it('writes nothing when it refuses a value', () => {
    const out = Buffer.alloc(10, '#');
    expect(() => writeField(rules, field({}), 'ABCDE', out, 3)).toThrow(/at most 4 characters/);
    expect(() => writeField(rules, field({ kind: 'bin', width: 1 }), 256, out, 3)).toThrow(/at most 255/);
    expect(out.toString('latin1')).toBe('##########');
  });
});

describe('unpadded', () => {
  it('strips the fill on the padded side only, and keeps zero fill (0000 is 0)', () => {
    expect(unpadded(field({}), ' A  ')).toBe(' A');
    expect(unpadded(field({ align: 'right' }), '  A ')).toBe('A ');
    expect(unpadded(field({ fill: 0x30, align: 'right' }), '0042')).toBe('0042');
  });
});
