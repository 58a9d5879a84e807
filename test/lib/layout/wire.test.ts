// The wire of a layout: what it says of a message it cannot carry, before anything is written.
import fs from 'node:fs';
import path from 'node:path';
import { checkLayout } from '../../../lib/layout/load';
import { TelegramWire, defaultWire } from '../../../lib/layout/wire';

/** Protocol version 1 with a site's narrower destination field in its ASGN telegram. */
function narrowDestinations() {
  const file = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../layouts/v1.json'), 'utf8'));
  const asgn = file.Telegrams.find((t: { Type: string }) => t.Type === 'ASGN');
  asgn.Fields.find((f: { Maps?: string }) => f.Maps === 'Destination').Width = 4;
  const { layout, problems } = checkLayout(file);
  expect(problems).toEqual([]);
  return new TelegramWire(layout!);
}

describe('TelegramWire.refusal', () => {
  it('null for what the layout carries', () => {
    expect(defaultWire().refusal({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D012345678AB', Barcode: '' } })).toBeNull();
  });

  it('names the message field, the layout and its field, what it takes and the value', () => {
    const wire = narrowDestinations();
    expect(wire.refusal({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D015', Barcode: '' } })).toBeNull();
    expect(wire.refusal({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'CHUTE-15', Barcode: '' } })).toBe(
      `"Destination" does not fit the sorter's telegram layout ${wire.layout.name}: its Destination takes at most 4 characters, got "CHUTE-15"`,
    );
  });
});
