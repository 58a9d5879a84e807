// The wire of a layout: what it says of a message it cannot carry, before anything is written; its
// rehearsal before the link connects.
import fs from 'node:fs';
import path from 'node:path';
import { checkLayout, loadLayout } from '../../../lib/layout/load';
import { LAYOUTS_DIR, TelegramWire, defaultWire } from '../../../lib/layout/wire';

/** Protocol version 1 with a site's narrower destination field in its ASGN telegram. */
function narrowDestinations() {
  const file = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../layouts/v1.json'), 'utf8'));
  const asgn = file.Telegrams.find((t: { Type: string }) => t.Type === 'ASGN');
  asgn.Fields.find((f: { Maps?: string }) => f.Maps === 'Destination').Width = 4;
  const { layout, problems } = checkLayout(file);
  expect(problems).toEqual([]);
  return new TelegramWire(layout!);
}

describe('TelegramWire.encodeOutbound', () => {
  it('null for what the layout carries', () => {
    const encoded = defaultWire().encodeOutbound({
      kind: 'ASSIGNMENT',
      body: { TrackID: '0004711', Destination: 'D012345678AB', Barcode: '' },
    });
    expect(encoded.refused).toBeNull();
    expect(encoded.telegram?.type).toBe('ASGN');
    expect(encoded.telegram?.data).toContain('D012345678AB');
  });

  it('names the message field, the layout and its field, what it takes and the value', () => {
    const wire = narrowDestinations();
    expect(wire.encodeOutbound({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D015', Barcode: '' } }).refused).toBeNull();
    expect(wire.encodeOutbound({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'CHUTE-15', Barcode: '' } })).toEqual({
      telegram: null,
      refused: `"Destination" does not fit the sorter's telegram layout ${wire.layout.name}: its Destination takes at most 4 characters, got "CHUTE-15"`,
    });
  });
});

describe('an inbound telegram, read once', () => {
  it('keeps the bytes it was framed from: the header is parsed from them and its data decoded from them, not from a second copy', () => {
    const wire = defaultWire();
    const { type, data } = wire.sorterMessageData({
      Type: 'VERIFY',
      TrackID: '0004711',
      Barcode: 'B1',
      Destination: 'D001',
      MessageCode: 212,
    });
    const frame = wire.encodeFrame({ sender: 'PLC', receiver: 'HOST', seq: 5, type, flag: 'D', data });
    const [item] = wire.decoder().push(Buffer.from(frame, 'latin1'));
    if (item?.kind !== 'telegram' || !item.raw) throw new Error(`not framed with its bytes: ${JSON.stringify(item)}`);
    const t = wire.parseContent(item.content, item.raw);
    expect(t.dataBytes?.toString('latin1')).toBe(t.data);
    // The message is decoded from dataBytes: change them, and the decoded message changes with them.
    const bytes = t.dataBytes;
    if (!bytes) throw new Error('no dataBytes');
    const at = bytes.indexOf('D001');
    bytes.write('D002', at, 'latin1');
    expect(wire.sorterMessageOf(t)).toMatchObject({ Type: 'VERIFY', TrackID: '0004711', Destination: 'D002' });
  });
});

describe('TelegramWire.rehearse', () => {
  const names = { name: 'WCS01', peerName: 'PLC01' };
  const shipped = fs.readdirSync(LAYOUTS_DIR).filter((f) => f.endsWith('.json'));

  it.each(shipped)('%s: each kind the layout carries goes round the codec, each round', (file) => {
    const wire = new TelegramWire(loadLayout(path.join(LAYOUTS_DIR, file)));
    const kinds = (['REQU', 'VERI', 'SCAN', 'ASGN'] as const).filter((t) => wire.layout.telegrams.has(t));
    expect(kinds.length).toBeGreaterThan(0);
    expect(wire.rehearse(names, 3)).toBe(3 * kinds.length);
  });

  it.each(shipped)('%s: leaves the wire it rehearses on as it was (its numbering of the telegrams in and out)', (file) => {
    const layout = loadLayout(path.join(LAYOUTS_DIR, file));
    const [rehearsed, fresh] = [new TelegramWire(layout), new TelegramWire(layout)];
    rehearsed.rehearse(names, 5);
    const request = fresh.sorterMessageData({
      Type: 'REQUEST',
      TrackID: '42',
      Barcode: 'B42',
      MessageCode: 0,
      InductLocation: '1',
      RecirculationCount: 0,
      Length: 2,
      Width: 2,
      Height: 2,
      Weight: 2,
    });
    const frame = fresh.encodeFrame({ sender: 'PLC01', receiver: 'WCS01', seq: 7, flag: 'D', ...request });
    const read = (w: TelegramWire) => {
      const [d] = w.decoder().push(frame);
      return d?.kind === 'telegram' ? w.parseContent(d.content, d.raw) : null;
    };
    expect(read(rehearsed)).toEqual(read(fresh));
    const ack = (w: TelegramWire) => w.encodeFrame({ sender: 'WCS01', receiver: 'PLC01', seq: 0, type: request.type, flag: 'A', data: '' });
    expect(ack(rehearsed)).toBe(ack(fresh));
  });
});
