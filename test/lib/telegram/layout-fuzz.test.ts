// 10,000 malformed telegrams for every shipped layout: each one read as garbage with its reason
// or refused with a TelegramError naming the field (what the link NAKs or logs), never a crash,
// and the valid telegram sent after it still comes through.
import fc from 'fast-check';
import type { LogicalType } from '../../../lib/telegram/contract';
import { TelegramError } from '../../../lib/telegram/codec';
import type { LayoutCodec } from '../../../lib/telegram/layout-codec';
import { LayoutFramer } from '../../../lib/telegram/layout-framing';
import { sorterMessageData, sorterMessageOf } from '../../../lib/telegram/layout-messages';
import type { InductDto } from '../../../model/messages';
import { SHIPPED, headerOf, shippedCodec, valuesOf } from '../../helpers/layout-arbitraries';

const RUNS = 10_000;
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 100_000);

const marker = (n: number): InductDto => ({ Type: 'REQUEST', TrackID: `MARK${n}`, Barcode: '', MessageCode: 210, InductLocation: 'IND01', RecirculationCount: 0, Length: 1, Width: 2, Height: 3, Weight: 4 });

/** Valid frames of every type the layout describes, as the arbitrary the malformations start from. */
function typedFrame(codec: LayoutCodec): fc.Arbitrary<{ type: LogicalType; frame: Buffer }> {
  const { layout } = codec;
  const types = [...layout.telegrams.keys()].filter((t) => !(t === 'NAK' && layout.handshake.by === 'flag'));
  return fc
    .constantFrom(...types)
    .chain((type) => fc.tuple(fc.constant(type), valuesOf(layout, type), headerOf(layout)))
    .map(([type, values, header]) => ({ type, frame: codec.encodeFrame({ ...header, type, flag: layout.handshake.by === 'type' ? (type === 'ACK' ? 'A' : type === 'NAK' ? 'N' : 'D') : 'D', data: codec.encodeData(type, values) }) }));
}
const validFrame = (codec: LayoutCodec) => typedFrame(codec).map((t) => t.frame);

/** Ways to break a frame. A raw-block layout (no framing characters) cannot tell a block cut short, so it gets only breaks that keep the length. */
function malformed(codec: LayoutCodec): fc.Arbitrary<{ kind: string; bytes: Buffer }> {
  const { framing, headerWidth } = codec.layout;
  const first = framing.start.length;
  const inner = (b: Buffer) => ({ from: first, to: b.length - framing.end.length });
  const flips = fc.tuple(validFrame(codec), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 })).map(([frame, changes]) => {
    const b = Buffer.from(frame);
    const { from, to } = inner(b);
    for (const [at, byte] of changes) b[from + (at % (to - from))] = byte;
    return { kind: 'bytes changed', bytes: b };
  });
  const header = fc.tuple(validFrame(codec), fc.nat({ max: headerWidth - 1 }), fc.integer({ min: 0, max: 255 })).map(([frame, at, byte]) => {
    const b = Buffer.from(frame);
    b[first + at] = byte;
    return { kind: 'header byte changed', bytes: b };
  });
  // A field that cannot hold what is written there: letters in a number or an enum, an unmapped binary code, a required text blank.
  const field = fc.tuple(typedFrame(codec), fc.nat()).map(([{ type, frame }, pick]) => {
    const b = Buffer.from(frame);
    const breakable = codec.layout.telegrams.get(type)!.fields.filter((f) => ['int', 'decimal', 'enum'].includes(f.kind) || (f.kind === 'bin' && f.map) || (f.kind === 'text' && f.required));
    const f = breakable[pick % Math.max(1, breakable.length)];
    if (f) b.fill(f.kind === 'bin' ? 0xff : f.kind === 'text' ? f.fill : 0x58, first + f.offset, first + f.offset + f.width);
    return { kind: 'field broken', bytes: b };
  });
  const raw = framing.start.length === 0 && framing.end.length === 0;
  const noFalseStart = (b: Buffer) => !raw || !codec.layout.roles.Length || !b.includes(Buffer.from([0x00, framing.telegramLength ?? 0]));
  const garbage = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((a) => ({ kind: 'garbage', bytes: Buffer.from(a) })).filter((g) => noFalseStart(g.bytes));
  if (raw) return fc.oneof(flips, header, garbage, field);
  const cut = fc.tuple(validFrame(codec), fc.nat()).map(([frame, n]) => ({ kind: 'cut short', bytes: frame.subarray(0, n % frame.length) }));
  const longer = fc.tuple(validFrame(codec), fc.uint8Array({ minLength: 1, maxLength: 20 })).map(([frame, extra]) => {
    const { to } = inner(frame);
    return { kind: 'bytes added', bytes: Buffer.concat([frame.subarray(0, to), Buffer.from(extra), frame.subarray(to)]) };
  });
  return fc.oneof(flips, header, garbage, cut, longer, field);
}

describe.each(SHIPPED)('layout %s: 10,000 malformed telegrams', (name) => {
  const codec = shippedCodec(name);

  it('each one skipped with a reason or refused naming a field, never a crash; the next telegram still comes through', () => {
    const items = fc.sample(malformed(codec), { numRuns: RUNS, seed });
    const outcomes = { garbage: 0, refusedHeader: 0, refusedData: 0, decoded: 0 };
    items.forEach((item, n) => {
      const framer = new LayoutFramer(codec.layout);
      const { type, data } = sorterMessageData(codec, marker(n));
      const next = codec.encodeFrame({ sender: 'PLC01', receiver: 'WCS01', seq: 1, type, flag: 'D', code: null, data });
      const seen: string[] = [];
      for (const d of [...framer.push(item.bytes), ...framer.push(next)]) {
        if (d.kind === 'garbage') {
          expect(d.reason).toMatch(/\w/);
          outcomes.garbage += 1;
          continue;
        }
        let t;
        try {
          t = codec.parseContent(d.content);
        } catch (err) {
          if (!(err instanceof TelegramError)) throw err;
          expect(err.field).toMatch(/\w/);
          outcomes.refusedHeader += 1;
          continue;
        }
        try {
          if (t.flag === 'N') codec.parseNak(t);
          else if (['REQU', 'VERI', 'SCAN'].includes(t.type)) seen.push(JSON.stringify(sorterMessageOf(codec, t.type, t.data)));
          else codec.decodeData(t.type, t.data);
          outcomes.decoded += 1;
        } catch (err) {
          if (!(err instanceof TelegramError)) throw err;
          expect(err.field).toMatch(/\w/);
          outcomes.refusedData += 1;
        }
      }
      if (!seen.includes(JSON.stringify(marker(n)))) throw new Error(`seed ${seed}, item ${n} (${item.kind}): the telegram after ${codec.layout.binary ? item.bytes.toString('hex') : JSON.stringify(item.bytes.toString('latin1'))} was lost`);
    });
    // Each kind of outcome happens: the fuzz reaches the framer, the header and the data.
    expect(outcomes.garbage + outcomes.refusedHeader).toBeGreaterThan(RUNS / 10);
    expect(outcomes.refusedData).toBeGreaterThan(RUNS / 100);
  });
});
