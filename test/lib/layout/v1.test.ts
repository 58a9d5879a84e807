// layouts/v1.json through the layout codec is protocol version 1 byte for byte: every telegram
// type encoded by both codecs gives the same bytes, and both read the same bytes the same way,
// refusals included.
import path from 'node:path';
import fc from 'fast-check';
import * as v1 from '../../../bench/v1-codec';
import { TelegramDecoder } from '../../../bench/v1-decoder';
import { loadLayout } from '../../../lib/layout/load';
import { LayoutCodec } from '../../../lib/layout/codec';
import { LayoutFramer, outboundData, sorterMessageData, sorterMessageOf } from '../../../lib/layout/wire';
import { BatchDoorStatus, DestinationStatus, LightColor, LightStatus } from '../../../model/enums';
import { nth } from '../../helpers/nth';

const codec = new LayoutCodec(loadLayout(path.join(__dirname, '../../../layouts/v1.json')));
const bytes = (s: string) => Buffer.from(s, 'latin1');
const str = (b: Buffer) => b.toString('latin1');

/** Printable ASCII up to `max` characters, without a trailing space; `min` 1 for required fields. */
const text = (max: number, min = 0) =>
  fc
    .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: min, maxLength: max })
    .map((s) => s.replace(/ +$/, ''))
    .filter((s) => s.length >= min);
const int = (digits: number) => fc.integer({ min: 0, max: 10 ** digits - 1 });
const decimal = fc
  .oneof(
    fc.integer({ min: 0, max: 999_999_999 }),
    fc.integer({ min: 0, max: 9_999_999 }).map((n) => n / 100),
    fc.integer({ min: 0, max: 9_999 }).map((n) => n / 1000),
  )
  .filter((n) => String(n).length <= 9);

const requ = fc.record({
  Type: fc.constant('REQUEST' as const),
  TrackID: text(20, 1),
  Barcode: text(48),
  MessageCode: int(5),
  InductLocation: text(12, 1),
  RecirculationCount: int(3),
  Length: decimal,
  Width: decimal,
  Height: decimal,
  Weight: decimal,
});
const veri = fc.record({
  Type: fc.constant('VERIFY' as const),
  TrackID: text(20, 1),
  Barcode: text(48),
  Destination: text(12, 1),
  MessageCode: int(5),
});
const scan = fc.record({
  Type: fc.constant('SCAN' as const),
  Destination: text(12, 1),
  DestinationStatus: fc.constantFrom(...DestinationStatus),
  DestinationText: text(40),
  LightStatus: fc.constantFrom(...LightStatus),
  LightColor: fc.constantFrom(...LightColor),
  ButtonID: int(3),
  MessageCode: int(5),
  BatchDoorStatus: fc.constantFrom(null, ...BatchDoorStatus),
});
const asgn = fc
  .record({ TrackID: text(20, 1), Barcode: text(48), Destination: text(12, 1) })
  .map((body) => ({ kind: 'ASSIGNMENT' as const, body }));
const dset = fc
  .record({
    Destination: text(12, 1),
    DestinationStatus: fc.constantFrom(...DestinationStatus),
    DestinationText: text(40),
    LightStatus: fc.constantFrom(...LightStatus),
    LightColor: fc.constantFrom(...LightColor),
    BatchDoorStatus: fc.constantFrom(null, ...BatchDoorStatus),
  })
  .map((body) => ({ kind: 'DESTINATION' as const, body }));
const header = fc.record({
  sender: text(6),
  receiver: text(6),
  seq: fc.integer({ min: 0, max: v1.MAX_SEQUENCE }),
  flag: fc.constantFrom('D' as const, 'A' as const, 'N' as const),
});

/** Both codecs' reading of a telegram's content: the header, and the data decoded, or the error's message. */
function readV1(content: string) {
  try {
    const t = v1.parseContent(content);
    let fields: unknown;
    try {
      fields = t.flag === 'N' ? v1.parseNak(t.data) : ['LIFE', 'SYNE'].includes(t.type) ? {} : v1.decodeData(t.type, t.data);
    } catch (err) {
      fields = (err as Error).message;
    }
    return { header: { ...t, data: undefined }, fields };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
function readLayout(content: string) {
  try {
    const t = codec.parseContent(bytes(content));
    let fields: unknown;
    try {
      fields = t.flag === 'N' ? codec.parseNak(t) : ['LIFE', 'SYNE'].includes(t.type) ? {} : codec.decodeData(t.type, t.data);
    } catch (err) {
      fields = (err as Error).message;
    }
    return { header: { sender: t.sender, receiver: t.receiver, seq: t.seq, type: t.type, flag: t.flag, data: undefined }, fields };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('layouts/v1.json is protocol version 1', () => {
  it('encodes every sorter message, assignment and destination setting to the same bytes, and reads them back alike', () => {
    fc.assert(
      fc.property(fc.oneof(requ, veri, scan), header, (m, h) => {
        const a = v1.sorterMessageData(m);
        const b = sorterMessageData(codec, m);
        expect(b.type).toBe(a.type);
        expect(str(b.data)).toBe(a.data);
        const frame = v1.encodeFrame({ ...h, type: a.type, data: a.data });
        expect(str(codec.encodeFrame({ ...h, code: null, type: b.type, data: b.data }))).toBe(frame);
        expect(sorterMessageOf(codec, b.type, b.data)).toEqual(v1.sorterMessageOf({ ...h, type: a.type, data: a.data }));
        expect(sorterMessageOf(codec, b.type, b.data)).toEqual(m);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.oneof(asgn, dset), header, (m, h) => {
        const a = v1.outboundData(m);
        const b = outboundData(codec, m);
        expect([b.type, str(b.data)]).toEqual([a.type, a.data]);
        expect(str(codec.encodeFrame({ ...h, code: null, type: b.type, data: b.data }))).toBe(
          v1.encodeFrame({ ...h, type: a.type, data: a.data }),
        );
        expect(codec.decodeData(b.type, b.data)).toEqual(v1.decodeData(a.type, a.data));
      }),
      { numRuns: 2000 },
    );
  });

  it('encodes LIFE, SYNS, SYNE, acknowledgements and NAKs to the same bytes', () => {
    fc.assert(
      fc.property(
        header,
        text(12, 1),
        int(6),
        fc.integer({ min: 0, max: 99 }),
        fc.string({ maxLength: 60 }),
        (h, epoch, next, code, why) => {
          for (const type of ['LIFE', 'SYNE', 'REQU', 'ASGN'] as const) {
            expect(str(codec.encodeFrame({ ...h, type, flag: 'A', code: null, data: Buffer.alloc(0) }))).toBe(
              v1.encodeFrame({ ...h, type, flag: 'A', data: '' }),
            );
          }
          const syns = v1.encodeData('SYNS', { Epoch: epoch, NextSeq: next });
          expect(str(codec.encodeData('SYNS', { Epoch: epoch, NextSeq: next }))).toBe(syns);
          expect(codec.decodeData('SYNS', bytes(syns))).toEqual(v1.decodeData('SYNS', syns));
          const nak = v1.nakData(code, why);
          expect(str(codec.encodeData('NAK', { Code: code, Text: why }))).toBe(nak);
          expect(codec.decodeData('NAK', bytes(nak))).toEqual({ Code: code, Text: v1.parseNak(nak).text });
          expect(codec.parseNak({ ...h, type: 'REQU', flag: 'N', code: null, data: bytes(nak) })).toEqual(v1.parseNak(nak));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses the same values, naming the same field', () => {
    const anything = fc.oneof(fc.string({ maxLength: 60 }), fc.integer({ min: -5, max: 10 ** 10 }), fc.double(), fc.constant(null));
    fc.assert(
      fc.property(
        fc.constantFrom('ASGN' as const, 'REQU' as const, 'VERI' as const, 'SYNS' as const),
        fc.dictionary(
          fc.constantFrom(
            'TrackID',
            'Barcode',
            'Destination',
            'MessageCode',
            'InductLocation',
            'RecirculationCount',
            'Length',
            'Weight',
            'Epoch',
            'NextSeq',
          ),
          anything,
        ),
        (type, values) => {
          const outcome = (f: () => unknown) => {
            try {
              return str(Buffer.from(f() as string, 'latin1'));
            } catch (err) {
              return (err as Error).message;
            }
          };
          expect(outcome(() => str(codec.encodeData(type, values)))).toBe(outcome(() => v1.encodeData(type, values)));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads any telegram content as version 1 does: the same header, the same data, the same refusal', () => {
    const valid = fc.oneof(requ, veri, scan).chain((m) => header.map((h) => v1.encodeContent({ ...h, ...v1.sorterMessageData(m) })));
    const mutated = fc
      .tuple(valid, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.nat({ max: 6 }))
      .map(([content, flips, cut]) => {
        let s = content;
        for (const [at, c] of flips) s = s.slice(0, at % s.length) + String.fromCharCode(c) + s.slice((at % s.length) + 1);
        return cut === 0 ? s.slice(0, -1 - (flips.length % 5)) : s;
      });
    fc.assert(
      fc.property(fc.oneof(valid, mutated, fc.string({ maxLength: 40 })), (content) => {
        expect(readLayout(content)).toEqual(readV1(content));
        expect(codec.sequenceOf(bytes(content))).toBe(v1.sequenceOf(content));
      }),
      { numRuns: 5000 },
    );
  });

  it('cuts a byte stream into the same frames and skips the same garbage', () => {
    const piece = fc.oneof(
      fc
        .oneof(requ, veri, scan)
        .map((m) => v1.encodeFrame({ sender: 'PLC01', receiver: 'WCS01', seq: 1, flag: 'D', ...v1.sorterMessageData(m) })),
      fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 30 }),
      fc.constantFrom(v1.STX, v1.ETX, `${v1.STX}${'x'.repeat(10_005)}`),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 10 }),
        (pieces, cuts) => {
          const stream = pieces.join('');
          const a = new TelegramDecoder();
          const b = new LayoutFramer(codec.layout);
          const got: unknown[] = [];
          const want: unknown[] = [];
          for (let at = 0, i = 0; at < stream.length; i++) {
            const chunk = stream.slice(at, at + nth(cuts, i % cuts.length));
            at += chunk.length;
            want.push(...a.push(chunk));
            got.push(
              ...b
                .push(bytes(chunk))
                .map((d) =>
                  d.kind === 'telegram'
                    ? { kind: d.kind, content: str(d.content) }
                    : { kind: d.kind, bytes: str(d.bytes), reason: d.reason },
                ),
            );
          }
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('wraps the sequence number from 999999 to 1', () => {
    expect(codec.nextSequence(999_999)).toBe(v1.nextSequence(999_999));
    expect(codec.nextSequence(41)).toBe(42);
  });
});
