// Sorter.Layout: found in the service home, then among the shipped layouts; checked against the
// rest of the sorter's settings, every problem named.
import fs from 'node:fs';
import path from 'node:path';
import { LayoutError, checkLayout } from '../../../lib/layout/load';
import { layoutFile, narrowerThanContract, sorterLayout } from '../../../lib/layout/site-layout';
import { LAYOUTS_DIR } from '../../../lib/layout/wire';
import { removeHome, tempHome } from '../../helpers/home';

const settings = { Layout: 'v1', Name: 'WCS01', PeerName: 'PLC01', Window: 64 };
const shipped = (name: string) => JSON.parse(fs.readFileSync(path.join(LAYOUTS_DIR, `${name}.json`), 'utf8'));

describe('Sorter.Layout', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('names a shipped layout by name, with or without .json, or a file in the service home, which comes first', () => {
    home = tempHome({ 'site.json': shipped('ewm-mfs'), 'v1.json': shipped('s7-raw') });
    expect(layoutFile(home, 'ewm-mfs')).toBe(path.join(LAYOUTS_DIR, 'ewm-mfs.json'));
    expect(layoutFile(home, 's7-raw.json')).toBe(path.join(LAYOUTS_DIR, 's7-raw.json'));
    expect(layoutFile(home, 'site')).toBe(path.join(home, 'site.json'));
    expect(layoutFile(home, 'v1')).toBe(path.join(home, 'v1.json'));
    expect(layoutFile('/nowhere', path.join(home, 'site.json'))).toBe(path.join(home, 'site.json'));
    expect(sorterLayout(home, { ...settings, Layout: 'site' }).name).toBe('ewm-mfs');
  });

  it('says where it looked for a name that is no file', () => {
    home = tempHome();
    expect(() => layoutFile(home, 'ewm')).toThrow(
      new RegExp(
        `Sorter.Layout "ewm" is not a usable layout:\\n  - names no layout file: looked for ${home}/ewm, ${home}/ewm.json, .*layouts/ewm, .*layouts/ewm.json`,
      ),
    );
  });

  it('refuses names that do not fit the header and a window the numbering cannot tell from repeats, with every problem', () => {
    const layout = shipped('v1');
    layout.Header[1].Width = 4;
    layout.Header[2].Width = 4;
    layout.Header[3].Width = 2;
    layout.Sequence.Last = 99;
    home = tempHome({ 'narrow.json': layout });
    let problems: string[] = [];
    try {
      sorterLayout(home, { ...settings, Layout: 'narrow' });
    } catch (err) {
      problems = (err as LayoutError).problems;
    }
    expect(problems).toEqual([
      'Sorter.Name "WCS01" does not fit the layout\'s 4-character Sender field "Sender"',
      'Sorter.PeerName "PLC01" does not fit the layout\'s 4-character Receiver field "Receiver"',
      "Sorter.Window 64 must be below 49, half the layout's sequence numbers (1-99)",
    ]);
  });

  it("refuses a wrong layout file with the layout's own problems", () => {
    const layout = shipped('s7-raw');
    layout.Telegrams[0].Fields[2].Offset = 31;
    layout.Telegrams[0].Fields.push({ Name: 'Extra', Kind: 'text', Width: 4, Maps: 'Colour' });
    home = tempHome({ 'plc.json': layout });
    expect(() => sorterLayout(home, { ...settings, Layout: 'plc.json' })).toThrow(LayoutError);
    expect(() => sorterLayout(home, { ...settings, Layout: 'plc.json' })).toThrow(
      /REQU field "Barcode" at offset 31 leaves bytes 30-30 described by no field[\s\S]*REQU field "InductLocation" at offset 78 overlaps[\s\S]*REQU field "Extra" maps "Colour", which InductDto does not have/,
    );
  });

  it('names the outgoing fields narrower than the HTTP contract (logged at start-up): none in the shipped layouts', () => {
    home = tempHome();
    for (const name of ['v1', 'ewm-mfs', 's7-raw'])
      expect(narrowerThanContract(sorterLayout(home, { ...settings, Layout: name }))).toEqual([]);
    const site = shipped('v1');
    site.Telegrams.find((t: { Type: string }) => t.Type === 'ASGN').Fields.find((f: { Maps?: string }) => f.Maps === 'Destination').Width =
      4;
    const { layout } = checkLayout(site);
    expect(narrowerThanContract(layout!)).toEqual([
      `layout ${layout!.name}: ASGN carries "Destination" in Destination, 4 characters, where the HTTP contract allows 12 characters: a POST with a value that does not fit is answered 400`,
    ]);
  });
});
