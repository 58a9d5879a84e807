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

describe('TelegramWire.encodeOutbound', () => {
  it('null for what the layout carries', () => {
    const encoded = defaultWire().encodeOutbound({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D012345678AB', Barcode: '' } });
    expect(encoded.refused).toBeNull();
    expect(encoded.telegram?.type).toBe('ASGN');
    expect(encoded.telegram?.data).toContain('D012345678AB');
  });

  it('names the message field, the layout and its field, what it takes and the value', () => {
    const wire = narrowDestinations();
    expect(wire.encodeOutbound({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D015', Barcode: '' } }).refused).toBeNull();
    expect(wire.encodeOutbound({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'CHUTE-15', Barcode: '' } })).toEqual({
      telegram: null,
      refused:
        `"Destination" does not fit the sorter's telegram layout ${wire.layout.name}: its Destination takes at most 4 characters, got "CHUTE-15"`,
    });
  });
});
