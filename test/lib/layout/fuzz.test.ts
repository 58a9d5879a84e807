// 10,000 malformed telegrams for every shipped layout: each one read as garbage with its reason
// or refused with a TelegramError naming the field (what the link NAKs or logs), never a crash,
// and the valid telegram sent after it still comes through.
import fc from 'fast-check';
import { TelegramError } from '../../../bench/v1-codec';
import { LayoutFramer, sorterMessageData, sorterMessageOf } from '../../../lib/layout/wire';
import type { InductDto } from '../../../model/messages';
import { SHIPPED, malformed, shippedCodec } from '../../helpers/layout-arbitraries';

const RUNS = 10_000;
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 100_000);

/** A REQUEST that fits every shipped layout, with what the layout gives as constants (acme-cb8 sends no dimensions). */
const marker = (n: number, constants: object = {}): InductDto => ({
  Type: 'REQUEST',
  TrackID: `MARK${n}`,
  Barcode: '',
  MessageCode: 210,
  InductLocation: 'IND1',
  RecirculationCount: 0,
  Length: 1,
  Width: 2,
  Height: 3,
  Weight: 4,
  ...constants,
});

describe.each(SHIPPED)('layout %s: 10,000 malformed telegrams', (name) => {
  const codec = shippedCodec(name);
  const constants = codec.layout.telegrams.get('REQU')!.constants;

  it('each one skipped with a reason or refused naming a field, never a crash; the next telegram still comes through', () => {
    const items = fc.sample(malformed(codec), { numRuns: RUNS, seed });
    const outcomes = { garbage: 0, refusedHeader: 0, refusedData: 0, decoded: 0 };
    items.forEach((item, n) => {
      const framer = new LayoutFramer(codec.layout);
      const { type, data } = sorterMessageData(codec, marker(n, constants));
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
      if (!seen.includes(JSON.stringify(marker(n, constants))))
        throw new Error(
          `seed ${seed}, item ${n} (${item.kind}): the telegram after ${codec.layout.binary ? item.bytes.toString('hex') : JSON.stringify(item.bytes.toString('latin1'))} was lost`,
        );
    });
    // Each kind of outcome happens: the fuzz reaches the framer, the header and the data.
    expect(outcomes.garbage + outcomes.refusedHeader).toBeGreaterThan(RUNS / 10);
    expect(outcomes.refusedData).toBeGreaterThan(RUNS / 100);
  });
});
