// Every shipped layout round-trips every telegram type it describes, through the framer split at
// random points: the widest and emptiest values, padding, every sequence number up to the wrap.
import fc from 'fast-check';
import type { LogicalType } from '../../../lib/telegram/contract';
import { TelegramError } from '../../../bench/v1-codec';
import type { Flag } from '../../../lib/layout/codec';
import { LayoutFramer } from '../../../lib/layout/wire';
import { SHIPPED, headerOf, shippedCodec, valuesOf } from '../../helpers/layout-arbitraries';
import { nth } from '../../helpers/nth';

/** Feed `stream` to a framer in reads of the given sizes; the contents it cuts out. */
function frames(framer: LayoutFramer, stream: Buffer, cuts: number[]) {
  const out: Buffer[] = [];
  const garbage: string[] = [];
  for (let at = 0, i = 0; at < stream.length; i++) {
    const chunk = stream.subarray(at, at + nth(cuts, i % cuts.length));
    at += chunk.length;
    for (const item of framer.push(chunk)) {
      if (item.kind === 'telegram') out.push(item.content);
      else garbage.push(item.reason);
    }
  }
  return { out, garbage };
}

describe.each(SHIPPED)('layout %s', (name) => {
  const codec = shippedCodec(name);
  const { layout } = codec;
  const types = [...layout.telegrams.keys()];
  const flagsFor = (type: LogicalType): Flag[] =>
    layout.handshake.by === 'type' ? [type === 'ACK' ? 'A' : type === 'NAK' ? 'N' : 'D'] : type === 'NAK' ? [] : ['D', 'A', 'N'];

  it.each(types)('round-trips %s: values, header and padding, in reads split anywhere', (type) => {
    if (flagsFor(type).length === 0) return; // a NAK by flag is the answered type's telegram: covered there
    fc.assert(
      fc.property(
        valuesOf(layout, type),
        headerOf(layout),
        fc.constantFrom(...flagsFor(type)),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 5 }),
        (values, header, flag, cuts) => {
          const data = codec.encodeData(type, values);
          expect(data.length).toBe(layout.telegrams.get(type)!.dataWidth);
          const wire = { ...header, type, flag, data };
          const frame = codec.encodeFrame(wire);
          if (layout.framing.telegramLength !== null)
            expect(frame.length).toBe(layout.framing.start.length + layout.framing.telegramLength + layout.framing.end.length);
          const twice = Buffer.concat([frame, frame]);
          const { out, garbage } = frames(new LayoutFramer(layout), twice, cuts);
          expect(garbage).toEqual([]);
          expect(out).toHaveLength(2);
          const t = codec.parseContent(nth(out, 1));
          expect({ ...t, data: undefined }).toEqual({ ...wire, data: undefined });
          expect(codec.decodeData(type, t.data)).toEqual({ ...layout.telegrams.get(type)!.constants, ...values });
          if (t.data.length > data.length) expect(t.data.subarray(data.length).every((b) => b === layout.fill)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('numbers 1 to Sequence.Last, then 1 again; a number past it does not fit its field', () => {
    const last = layout.sequence.last;
    expect(codec.nextSequence(last)).toBe(1);
    expect(codec.nextSequence(last - 1)).toBe(last);
    const wire = { sender: '', receiver: '', code: null, type: 'LIFE' as const, flag: 'D' as const, data: Buffer.alloc(0) };
    expect(codec.parseContent(codec.encodeContent({ ...wire, seq: last })).seq).toBe(last);
    const capacity =
      layout.roles.Sequence!.kind === 'bin' ? 2 ** (8 * layout.roles.Sequence!.width) - 1 : 10 ** layout.roles.Sequence!.width - 1;
    expect(() => codec.encodeContent({ ...wire, seq: capacity + 1 })).toThrow(TelegramError);
  });

  it('refuses a value wider than its field or outside its map, naming the field, instead of cutting it', () => {
    const asgn = layout.telegrams.get('ASGN')!;
    const trackId = asgn.fields.find((f) => f.maps === 'TrackID')!;
    expect(() => codec.encodeData('ASGN', { TrackID: 'x'.repeat(trackId.width + 1), Destination: 'D1', Barcode: '' })).toThrow(
      new RegExp(`^${trackId.name}: .*at most ${trackId.width} characters`),
    );
    // A sorter without destination lights (acme-cb8) has no DSET.
    if (layout.telegrams.has('DSET'))
      expect(() =>
        codec.encodeData('DSET', {
          Destination: 'D1',
          DestinationStatus: 'Maybe',
          LightStatus: 'Off',
          LightColor: 'Off',
          BatchDoorStatus: null,
          DestinationText: '',
        }),
      ).toThrow(/one of/);
  });
});
