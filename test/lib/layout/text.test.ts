// Telegram bytes written readably and read back: any bytes, and a binary layout's telegram with
// its binary fields as one hex group each.
import fc from 'fast-check';
import { bytesOf, isHexDump, readableBytes } from '../../../lib/layout/text';

describe('readable telegram bytes', () => {
  it('reads back any bytes written readably', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        const bytes = Buffer.concat([Buffer.from(a), Buffer.alloc(b.length * 3, b[0] ?? 0), Buffer.from(b)]);
        expect(bytesOf(readableBytes(bytes))).toEqual(bytes);
      }),
    );
  });

  it('writes printable ASCII as it is, other bytes as <hh>, runs of a byte as <hh*n>, and "<" escaped', () => {
    expect(readableBytes(Buffer.from('AB<\x02\x00\x00\x00\x00\x00 z', 'latin1'))).toBe('AB<3C><02><00*5> z');
    expect(bytesOf('<0080><0001>x<00*3>')).toEqual(Buffer.from([0x00, 0x80, 0x00, 0x01, 0x78, 0, 0, 0]));
  });

  it('tells a hex dump from text', () => {
    expect(isHexDump('02 30 31 03')).toBe(true);
    expect(isHexDump('02:30:31:03')).toBe(true);
    expect(isHexDump('0230310300803f41')).toBe(true);
    expect(isHexDump('0070DREQ')).toBe(false);
    expect(isHexDump('cafe')).toBe(false);
  });
});
