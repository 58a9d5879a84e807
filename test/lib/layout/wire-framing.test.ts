// The framer of each kind of layout (LayoutFramer, lib/layout/wire.ts), by example: what it skips, why, and where it finds the next
// telegram (layout-codec.test.ts and layout-fuzz.test.ts drive it with generated streams).
import { type Framed, LayoutFramer } from '../../../lib/layout/wire';
import type { LayoutCodec } from '../../../lib/layout/codec';
import { shippedCodec } from '../../helpers/layout-arbitraries';

/** One valid ASGN frame of the layout, as a sorter would see it. */
function asgnFrame(codec: LayoutCodec): Buffer {
  const data = codec.encodeData('ASGN', { TrackID: '000123', Barcode: '4006381333931', Destination: 'D07' });
  return codec.encodeFrame({ sender: 'WCS', receiver: 'PLC', seq: 1, code: null, type: 'ASGN', flag: 'D', data });
}

/** What a framer of the layout makes of the reads, in order: telegram contents and garbage reasons. */
function cut(codec: LayoutCodec, ...reads: Array<Buffer | string>): Array<{ telegram: Buffer } | { garbage: string; bytes: number }> {
  const framer = new LayoutFramer(codec.layout);
  return reads
    .flatMap((r) => framer.push(r))
    .map((f: Framed) => (f.kind === 'telegram' ? { telegram: f.content } : { garbage: f.reason, bytes: f.bytes.length }));
}

/** The content between a frame's framing characters, as the framer hands it on. */
const contentOf = (codec: LayoutCodec, frame: Buffer) =>
  frame.subarray(codec.layout.framing.start.length, frame.length - codec.layout.framing.end.length);

describe('start and end characters (v1: STX ... ETX)', () => {
  const codec = shippedCodec('v1');
  const frame = asgnFrame(codec);

  it('reads a telegram fed one byte at a time', () => {
    const framer = new LayoutFramer(codec.layout);
    const out = [...frame].flatMap((b) => framer.push(Buffer.from([b])));
    expect(out).toEqual([{ kind: 'telegram', content: contentOf(codec, frame) }]);
  });

  it('skips bytes before the start character as garbage, and reads the telegram after them', () => {
    expect(cut(codec, Buffer.concat([Buffer.from('noise'), frame]))).toEqual([
      { garbage: 'bytes outside a telegram', bytes: 5 },
      { telegram: contentOf(codec, frame) },
    ]);
  });

  it('reports a telegram cut short by a new STX and reads the one that follows', () => {
    expect(cut(codec, frame.subarray(0, 10), frame)).toEqual([
      { garbage: 'telegram cut short by a new STX', bytes: 10 },
      { telegram: contentOf(codec, frame) },
    ]);
  });

  it('gives up on a telegram without ETX within MaxLength characters, and finds the next STX', () => {
    const max = codec.layout.framing.maxLength;
    const out = cut(codec, Buffer.concat([Buffer.from('\x02'), Buffer.alloc(max + 1, 'x')]), frame);
    expect(out).toEqual([{ garbage: `no ETX within ${max} characters`, bytes: max + 2 }, { telegram: contentOf(codec, frame) }]);
  });
});

describe('a fixed length and an end character (ewm-mfs: 150 characters and #)', () => {
  const codec = shippedCodec('ewm-mfs');
  const frame = asgnFrame(codec);

  it('reads two telegrams packed into one read', () => {
    expect(frame.length).toBe(151);
    expect(cut(codec, Buffer.concat([frame, frame]))).toEqual([
      { telegram: contentOf(codec, frame) },
      { telegram: contentOf(codec, frame) },
    ]);
  });

  it('after bytes before a telegram, skips up to the telegram that ends at the next #', () => {
    expect(cut(codec, Buffer.concat([Buffer.from('abc'), frame]))).toEqual([
      { garbage: 'no "#" after 150 bytes: skipped up to the telegram before the next "#"', bytes: 3 },
      { telegram: contentOf(codec, frame) },
    ]);
  });

  it('skips a telegram cut short up to its #, and reads the next whole one', () => {
    const short = Buffer.concat([frame.subarray(0, 40), Buffer.from('#')]);
    const out = cut(codec, Buffer.concat([short, frame]));
    expect(out.filter((x) => 'garbage' in x).reduce((n, x) => n + (x as { bytes: number }).bytes, 0)).toBe(short.length);
    expect(out[out.length - 1]).toEqual({ telegram: contentOf(codec, frame) });
  });
});

/** How many bytes the framer skipped as garbage, over all its reasons. */
const skippedBytes = (got: ReturnType<typeof cut>) => got.reduce((n, f) => n + ('garbage' in f ? f.bytes : 0), 0);

describe('raw blocks of a fixed size with a length field (s7-raw: 128 bytes, no framing character)', () => {
  const codec = shippedCodec('s7-raw');
  const frame = asgnFrame(codec);

  it('reads blocks split anywhere by the reads', () => {
    expect(frame.length).toBe(128);
    const stream = Buffer.concat([frame, frame]);
    expect(cut(codec, stream.subarray(0, 5), stream.subarray(5, 200), stream.subarray(200))).toEqual([
      { telegram: frame },
      { telegram: frame },
    ]);
  });

  it('after bytes that are no block, skips to where the length and the type read right', () => {
    expect(cut(codec, Buffer.concat([Buffer.from([0xff, 0xee, 0xdd]), frame]))).toEqual([
      { garbage: 'no telegram starts here (its length field does not say 128): skipped up to one that does', bytes: 3 },
      { telegram: frame },
    ]);
  });

  it('waits for the rest of a block rather than guessing', () => {
    expect(cut(codec, frame.subarray(0, 127))).toEqual([]);
  });

  it('garbage ending in a length next to the real header does not take the real block (found by the fuzz, seed 63134)', () => {
    // A block whose length field was mutated, ending in 00 00 80 00: three bytes before the next
    // block, 00 80 reads as the length 128, but the type there is 0 and the number 0x8000.
    const garbage = Buffer.alloc(128);
    garbage.writeUInt16BE(15, 0);
    garbage.set([0x00, 0x00, 0x80, 0x00], 124);
    const reads = [garbage, frame];
    const got = cut(codec, ...reads);
    expect(got.filter((f) => 'telegram' in f)).toEqual([{ telegram: frame }]);
    expect(skippedBytes(got)).toBe(128);
    // The same bytes in one read.
    expect(cut(codec, Buffer.concat(reads)).filter((f) => 'telegram' in f)).toEqual([{ telegram: frame }]);
  });

  it('a whole block with a wrong length field whose data reads as a header: the next block is where it would be (found by the fuzz, seed 82253)', () => {
    // Data whose numbers read as a header 20 bytes in: length 128, type 1, number 1 (INT fields
    // holding 128, 1, 1). Judged by that header alone, a block would run 20 bytes into the next
    // one and the next one be lost.
    const bad = Buffer.from(frame);
    bad.writeUInt16BE(1, 0);
    bad.set([0x00, 0x80, 0x00, 0x01, 0x00, 0x01, 0x00, 0x02], 20);
    for (const reads of [
      [bad, frame],
      [Buffer.concat([bad, frame])],
      [bad.subarray(0, 30), Buffer.concat([bad.subarray(30), frame.subarray(0, 50)]), frame.subarray(50)],
    ]) {
      const got = cut(codec, ...reads);
      expect(got.filter((f) => 'telegram' in f)).toEqual([{ telegram: frame }]);
      expect(skippedBytes(got)).toBe(128);
    }
    // And a block that is short, not wrong: the next one is found where it starts.
    const short = frame.subarray(0, 40);
    expect(cut(codec, Buffer.concat([Buffer.from([0xff]), short.subarray(1), frame]))).toEqual([
      { garbage: 'no telegram starts here (its length field does not say 128): skipped up to one that does', bytes: 40 },
      { telegram: frame },
    ]);
  });
});
