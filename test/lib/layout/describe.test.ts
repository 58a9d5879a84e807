// The commissioning tool's output: a layout's telegram table, and a captured telegram decoded
// field by field with the first field that does not fit named.
import fs from 'node:fs';
import path from 'node:path';
import { checkLayout, loadLayout } from '../../../lib/layout/load';
import { LayoutCodec } from '../../../lib/layout/codec';
import { describeTelegram, layoutTable, telegramBytes } from '../../../lib/layout/describe';
import { sorterMessageData } from '../../../lib/layout/wire';
import { readableTelegram } from '../../../lib/layout/text';
import type { InductDto } from '../../../model/messages';

const layoutFile = (name: string) => path.join(__dirname, '../../../layouts', `${name}.json`);
const induct: InductDto = {
  Type: 'REQUEST',
  TrackID: '0004711',
  Barcode: '4006381333931',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 320.5,
  Width: 210,
  Height: 95,
  Weight: 1.25,
};

function requ(name: string) {
  const codec = new LayoutCodec(loadLayout(layoutFile(name)));
  const { type, data } = sorterMessageData(codec, induct);
  return { codec, content: codec.encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq: 7, type, flag: 'D', code: null, data }) };
}

describe('layout table', () => {
  it('lists the header and each type with offsets, 1-based positions, widths, kinds and what each field carries', () => {
    const table = layoutTable(loadLayout(layoutFile('s7-raw')));
    expect(table).toContain('HEADER (8 bytes)');
    expect(table).toMatch(/^ +0 +1 +2 +bin16 +Length +Length +counts the telegram$/m);
    expect(table).toMatch(/^REQU {2}code "1" {2}FromSorter {2}InductDto {2}\(108 of 128 bytes used\)$/m);
    expect(table).toMatch(/^ +104 +105 +4 +bin32 \/10\^3 +Weight +Weight$/m);
    expect(table).toMatch(/^ +30 +31 +2 +bin16 +Door +BatchDoorStatus +0=null 1=OPENED 2=CLOSED$/m);
  });

  it('is drawn for a layout with problems too, so the integrator sees where the offsets went wrong', () => {
    const broken = JSON.parse(fs.readFileSync(layoutFile('ewm-mfs'), 'utf8'));
    broken.Telegrams[0].Fields[1].Offset = 30;
    const { draft, problems } = checkLayout(broken);
    expect(problems).toEqual(['REQU field "HUIDENT" at offset 30 overlaps the field before it, which ends at 37']);
    expect(layoutTable(draft!)).toMatch(/^ +30 +31 +20 +text +HUIDENT +TrackID +required$/m);
  });
});

describe('decoding a captured telegram', () => {
  it('reads a hex dump as copied from a network capture, field by field', () => {
    const { codec, content } = requ('s7-raw');
    const hex = content.toString('hex').replace(/(..)/g, '$1 ');
    const { lines, problem } = describeTelegram(codec, telegramBytes(codec.layout, hex));
    expect(problem).toBeNull();
    expect(lines.join('\n')).toMatch(/^ +2 +2 +TeleType +"<00><01>" +"1 = REQU"$/m);
    expect(lines.join('\n')).toMatch(/^ +104 +4 +Weight +"<00><00><04><E2>" +1.25$/m);
    expect(lines.join('\n')).toMatch(/^ +108 +20 +\(padding\)/m);
  });

  it("reads the traffic log's line of a binary layout and of a text layout", () => {
    for (const name of ['s7-raw', 'ewm-mfs', 'v1']) {
      const { codec, content } = requ(name);
      const logged = readableTelegram(codec.layout, content, () => codec.layout.telegrams.get('REQU')!.fields);
      expect(telegramBytes(codec.layout, logged, true)).toEqual(content);
    }
  });

  it('takes the framing characters off text as pasted, with <STX> and <ETX> by name', () => {
    const { codec, content } = requ('v1');
    expect(telegramBytes(codec.layout, `<STX>${content.toString('latin1')}<ETX>`)).toEqual(content);
    const ewm = requ('ewm-mfs');
    expect(telegramBytes(ewm.codec.layout, `${ewm.content.toString('latin1')}#`)).toEqual(ewm.content);
  });

  it('names the first field that does not fit, and still shows the others', () => {
    const { codec, content } = requ('ewm-mfs');
    const broken = Buffer.from(content);
    broken.write('X', 29 + 8 + 20 + 48, 'latin1'); // RECIRC
    broken.write('.', 29 + 8, 'latin1'); // HUIDENT begins with a fill: fine, it is left-aligned
    const { lines, problem } = describeTelegram(codec, broken);
    expect(problem).toBe('RECIRC: got "X0", expected 2 digits');
    expect(lines.join('\n')).toMatch(/^ +105 +2 +RECIRC +"X0" +DOES NOT FIT: expected 2 digits$/m);
    expect(lines.join('\n')).toMatch(/^ +107 +6 +LENGTH +"003205" +320.5$/m);
  });

  it('names a telegram cut short: the field it ends in', () => {
    const { codec, content } = requ('v1');
    const { problem } = describeTelegram(codec, content.subarray(0, 60));
    expect(problem).toBe('Length: got "0151", expected 4 digits equal to the telegram length 60');
    const s7 = requ('s7-raw');
    expect(describeTelegram(s7.codec, s7.content.subarray(0, 5)).problem).toBe(
      'Length: got "<00><80>", expected 2 bytes equal to the telegram length 5',
    );
    const ewm = requ('ewm-mfs');
    expect(describeTelegram(ewm.codec, ewm.content.subarray(0, 10)).problem).toBe(
      'RECEIVER: the telegram ends at byte 10, the field needs bytes 8-15',
    );
  });
});
