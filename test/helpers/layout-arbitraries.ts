// Test helper: fast-check arbitraries for the values a layout's fields can carry, taken from the
// layout itself, with the widest and emptiest values favoured.
import path from 'node:path';
import fc from 'fast-check';
import type { LogicalType } from '../../lib/telegram/contract';
import { loadLayout } from '../../lib/layout/load';
import type { Field, Layout } from '../../lib/layout/table';
import { LayoutCodec, type WireTelegram } from '../../lib/layout/codec';

/** The layouts in layouts/, by name. */
export const SHIPPED = ['v1', 'ewm-mfs', 's7-raw', 'acme-cb8'] as const;
export const shippedCodec = (name: string) => new LayoutCodec(loadLayout(path.join(__dirname, '../../layouts', `${name}.json`)));

/** Characters a text field of this layout may hold. */
function chars(layout: Layout): fc.Arbitrary<string> {
  const hi = layout.charset === 'ascii' ? 0x7e : 0xff;
  return fc
    .integer({ min: 0x20, max: hi })
    .filter((c) => c <= 0x7e || c >= 0xa0)
    .map((c) => String.fromCharCode(c));
}

/** A value of a text field: not blank if required, no fill where the padding goes; widest and emptiest favoured. */
function text(layout: Layout, f: Field, maxWidth = f.width): fc.Arbitrary<string> {
  const fill = String.fromCharCode(f.fill);
  const fits = (s: string) => {
    let out = s;
    while (out.length > 0 && (f.align === 'left' ? out.endsWith(fill) : out.startsWith(fill)))
      out = f.align === 'left' ? out.slice(0, -1) : out.slice(1);
    return out;
  };
  const min = f.required ? 1 : 0;
  const width = Math.min(f.width, maxWidth);
  const any = fc.string({ unit: chars(layout), minLength: min, maxLength: width }).map(fits);
  const widest = fc.string({ unit: chars(layout).filter((c) => c !== fill), minLength: width, maxLength: width });
  return fc
    .oneof({ weight: 6, arbitrary: any }, { weight: 2, arbitrary: widest }, { weight: 1, arbitrary: fc.constant('x'.repeat(min)) })
    .filter((s) => s.length >= min);
}

/** A whole number of up to `digits` digits or `max`, 0 and the largest favoured. */
const whole = (max: number) =>
  fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max }) }, { weight: 1, arbitrary: fc.constantFrom(0, max) });

/** A value the field can carry, as the contract holds it. */
export function valueOf(layout: Layout, f: Field): fc.Arbitrary<unknown> {
  switch (f.kind) {
    case 'text':
      return text(layout, f);
    case 'enum':
      return fc.constantFrom(...new Set([...f.map!.values(), ...(f.required ? [] : [null])]));
    case 'bin':
      if (f.map) return fc.constantFrom(...new Set(f.map.values()));
      return whole(2 ** (8 * f.width) - 1).map((n) => (f.scale ? Number((n / 10 ** f.scale).toFixed(f.scale)) : n));
    case 'int':
      return whole(10 ** Math.min(f.width, 15) - 1);
    case 'decimal':
      if (f.scale !== null) return whole(10 ** Math.min(f.width, 15) - 1).map((n) => Number((n / 10 ** f.scale!).toFixed(f.scale!)));
      return fc
        .oneof(
          whole(10 ** f.width - 1),
          whole(10 ** (f.width - 2) - 1).map((n) => n / 10),
          whole(10 ** (f.width - 3) - 1).map((n) => n / 100),
        )
        .filter((n) => String(n).length <= f.width && !String(n).includes('e'));
    default:
      return fc.constant(undefined);
  }
}

/** The contract values of one telegram type of a layout: every mapped field (AckType: a type the layout has). */
export function valuesOf(layout: Layout, type: LogicalType): fc.Arbitrary<Record<string, unknown>> {
  const spec = layout.telegrams.get(type)!;
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of spec.fields) {
    if (!f.maps) continue;
    if (f.maps === 'AckType') record.AckType = fc.constantFrom(...[...layout.byCode.values()].map((t) => t.type));
    else if (f.maps === 'Text' && type === 'NAK')
      record.Text = text(layout, f).map((s) => s.replace(/ +$/, '')); // a diagnostic: its end is trimmed
    else record[f.maps] = valueOf(layout, f);
  }
  return fc.record(record);
}

/** A header for a telegram of the layout: names that fit, any sequence number 1..Last or the control number. */
export function headerOf(layout: Layout): fc.Arbitrary<Omit<WireTelegram, 'type' | 'data' | 'flag'>> {
  const { Sender, Receiver, Code } = layout.roles;
  const name = (f: Field | undefined) => (f ? text(layout, { ...f, required: false }) : fc.constant(''));
  const code = Code ? whole(Math.min(10 ** Code.width - 1, 2 ** 31)).map((n) => (n === 0 ? null : n)) : fc.constant(null);
  return fc.record({
    sender: name(Sender),
    receiver: name(Receiver),
    seq: layout.roles.Sequence
      ? fc.oneof(
          whole(layout.sequence.last).filter((n) => n > 0),
          fc.constant(layout.sequence.control),
        )
      : fc.constant(0),
    code,
  });
}

/** Valid frames of every type the layout describes, as the arbitrary the malformations start from. */
export function typedFrame(codec: LayoutCodec): fc.Arbitrary<{ type: LogicalType; frame: Buffer }> {
  const { layout } = codec;
  const types = [...layout.telegrams.keys()].filter((t) => !(t === 'NAK' && layout.handshake.by === 'flag'));
  return fc
    .constantFrom(...types)
    .chain((type) => fc.tuple(fc.constant(type), valuesOf(layout, type), headerOf(layout)))
    .map(([type, values, header]) => ({
      type,
      frame: codec.encodeFrame({
        ...header,
        type,
        flag: layout.handshake.by === 'type' ? (type === 'ACK' ? 'A' : type === 'NAK' ? 'N' : 'D') : 'D',
        data: codec.encodeData(type, values),
      }),
    }));
}
export const validFrame = (codec: LayoutCodec) => typedFrame(codec).map((t) => t.frame);

/** Ways to break a frame. A raw-block layout (no framing characters) cannot tell a block cut short, so it gets only breaks that keep the length. */
export function malformed(codec: LayoutCodec): fc.Arbitrary<{ kind: string; bytes: Buffer }> {
  const { framing, headerWidth } = codec.layout;
  const first = framing.start.length;
  const inner = (b: Buffer) => ({ from: first, to: b.length - framing.end.length });
  const flips = fc
    .tuple(validFrame(codec), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }))
    .map(([frame, changes]) => {
      const b = Buffer.from(frame);
      const { from, to } = inner(b);
      for (const [at, byte] of changes) b[from + (at % (to - from))] = byte;
      return { kind: 'bytes changed', bytes: b };
    });
  const header = fc
    .tuple(validFrame(codec), fc.nat({ max: headerWidth - 1 }), fc.integer({ min: 0, max: 255 }))
    .map(([frame, at, byte]) => {
      const b = Buffer.from(frame);
      b[first + at] = byte;
      return { kind: 'header byte changed', bytes: b };
    });
  // A field that cannot hold what is written there: letters in a number or an enum, an unmapped binary code, a required text blank.
  const field = fc.tuple(typedFrame(codec), fc.nat()).map(([{ type, frame }, pick]) => {
    const b = Buffer.from(frame);
    const breakable = codec.layout.telegrams
      .get(type)!
      .fields.filter(
        (f) => ['int', 'decimal', 'enum'].includes(f.kind) || (f.kind === 'bin' && f.map) || (f.kind === 'text' && f.required),
      );
    const f = breakable[pick % Math.max(1, breakable.length)];
    if (f) b.fill(f.kind === 'bin' ? 0xff : f.kind === 'text' ? f.fill : 0x58, first + f.offset, first + f.offset + f.width);
    return { kind: 'field broken', bytes: b };
  });
  const raw = framing.start.length === 0 && framing.end.length === 0;
  const noFalseStart = (b: Buffer) => !raw || !codec.layout.roles.Length || !b.includes(Buffer.from([0x00, framing.telegramLength ?? 0]));
  const garbage = fc
    .uint8Array({ minLength: 1, maxLength: 300 })
    .map((a) => ({ kind: 'garbage', bytes: Buffer.from(a) }))
    .filter((g) => noFalseStart(g.bytes));
  if (raw) return fc.oneof(flips, header, garbage, field);
  const cut = fc
    .tuple(validFrame(codec), fc.nat())
    .map(([frame, n]) => ({ kind: 'cut short', bytes: frame.subarray(0, n % frame.length) }));
  const longer = fc.tuple(validFrame(codec), fc.uint8Array({ minLength: 1, maxLength: 20 })).map(([frame, extra]) => {
    const { to } = inner(frame);
    return { kind: 'bytes added', bytes: Buffer.concat([frame.subarray(0, to), Buffer.from(extra), frame.subarray(to)]) };
  });
  return fc.oneof(flips, header, garbage, cut, longer, field);
}
