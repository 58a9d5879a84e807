// Framing: STX...ETX frames out of any split of the byte stream, garbage skipped and reported.
import fc from 'fast-check';
import { ETX, STX } from '../../bench/v1-codec';
import { MAX_CONTENT, TelegramDecoder } from '../../bench/v1-decoder';

/** Telegram contents as they travel: printable ASCII. */
const content = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 200 });
/** Garbage: any bytes but STX (an STX would legitimately start a frame); ETX and noise allowed. */
const garbage = fc.string({
  unit: fc
    .integer({ min: 0, max: 255 })
    .filter((c) => c !== 2)
    .map((c) => String.fromCharCode(c)),
  maxLength: 30,
});

/** Split a string at random points into reads. */
function split(s: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(s.slice(last, p));
    last = p;
  }
  parts.push(s.slice(last));
  return parts;
}

const decodeAll = (reads: string[]) => {
  const d = new TelegramDecoder();
  return reads.flatMap((r) => d.push(Buffer.from(r, 'latin1')));
};
const telegrams = (decoded: ReturnType<TelegramDecoder['push']>) =>
  decoded.filter((x) => x.kind === 'telegram').map((x) => (x as { content: string }).content);

describe('TelegramDecoder', () => {
  it('never loses or invents a telegram, however the stream is split, packed or soiled', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(garbage, content)), garbage, fc.array(fc.nat(), { maxLength: 40 }), (frames, tail, cuts) => {
        const stream = frames.map(([g, c]) => `${g}${STX}${c}${ETX}`).join('') + tail;
        expect(telegrams(decodeAll(split(stream, cuts)))).toEqual(frames.map(([, c]) => c));
      }),
      { numRuns: 500 },
    );
  });

  it('drops a frame cut short by a new STX and resynchronises on the next one', () => {
    const decoded = decodeAll([`${STX}0027PLC01 WC`, `${STX}ok${ETX}`]);
    expect(decoded).toEqual([
      { kind: 'garbage', bytes: `${STX}0027PLC01 WC`, reason: 'telegram cut short by a new STX' },
      { kind: 'telegram', content: 'ok' },
    ]);
  });

  it('reports bytes outside frames and keeps a frame that arrives one byte a read', () => {
    const stream = `noise${STX}abc${ETX}`;
    const decoded = decodeAll(stream.split(''));
    expect(telegrams(decoded)).toEqual(['abc']);
    expect(
      decoded
        .filter((d) => d.kind === 'garbage')
        .map((d) => (d as { bytes: string }).bytes)
        .join(''),
    ).toBe('noise');
  });

  it('gives up on a frame without ETX after MAX_CONTENT characters and recovers', () => {
    const d = new TelegramDecoder();
    const out = [...d.push(STX + 'x'.repeat(MAX_CONTENT + 1)), ...d.push(`${STX}next${ETX}`)];
    expect(out[0]).toMatchObject({ kind: 'garbage', reason: `no ETX within ${MAX_CONTENT} characters` });
    expect(telegrams(out)).toEqual(['next']);
  });
});
