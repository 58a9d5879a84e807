// Loading layout files (load.ts, through the schema of schema.ts and the rules of
// check.ts): a wrong one is refused with every problem named, a right one resolves to offsets.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LayoutError, checkLayout, loadLayout } from '../../../lib/layout/load';
import { nth } from '../../helpers/nth';

/** A small layout that is right: each test breaks one thing. */
function base() {
  return {
    Name: 'test',
    Charset: 'ascii',
    Fill: ' ',
    Framing: { Start: 'STX', End: 'ETX' },
    Header: [
      { Name: 'Len', Role: 'Length', Kind: 'int', Width: 4 },
      { Name: 'Seq', Role: 'Sequence', Kind: 'int', Width: 4 },
      { Name: 'Type', Role: 'Type', Kind: 'text', Width: 4 },
      { Name: 'Flag', Role: 'Handshake', Kind: 'text', Width: 1 },
    ],
    Sequence: { Last: 9999 },
    Handshake: {
      By: 'flag',
      Flags: { Data: 'D', Ack: 'A', Nak: 'N' },
      NakCodes: { Malformed: 1, BadData: 2, Unexpected: 3, CannotStore: 4 },
    },
    Life: null,
    Resync: 'none',
    Telegrams: [
      {
        Type: 'REQU',
        Code: 'REQU',
        Direction: 'FromSorter',
        Constants: { MessageCode: 210, RecirculationCount: 0, Length: 0, Width: 0, Height: 0, Weight: 0, Barcode: '' },
        Fields: [
          { Name: 'TrackID', Kind: 'text', Width: 10, Maps: 'TrackID', Required: true },
          { Name: 'Induct', Kind: 'text', Width: 4, Maps: 'InductLocation' },
        ],
      },
      {
        Type: 'ASGN',
        Code: 'ASGN',
        Direction: 'ToSorter',
        Fields: [
          { Name: 'TrackID', Kind: 'text', Width: 10, Maps: 'TrackID' },
          { Name: 'Dest', Kind: 'text', Width: 4, Maps: 'Destination' },
        ],
      },
      {
        Type: 'DSET',
        Code: 'DSET',
        Direction: 'ToSorter',
        Fields: [{ Name: 'Status', Kind: 'enum', Width: 1, Maps: 'DestinationStatus', Map: { R: 'Ready', N: 'NotReady' } }],
      },
      { Type: 'NAK', Direction: 'Both', Fields: [{ Name: 'Code', Kind: 'int', Width: 2, Maps: 'Code' }] },
    ],
  };
}
type Raw = ReturnType<typeof base>;
const problemsOf = (change: (l: Raw) => void) => {
  const l = base();
  change(l);
  return checkLayout(JSON.parse(JSON.stringify(l))).problems;
};

describe('layout files', () => {
  it('resolves a right layout: offsets follow each other, the header first', () => {
    const { layout, problems } = checkLayout(base());
    expect(problems).toEqual([]);
    expect(layout!.headerWidth).toBe(13);
    expect(layout!.telegrams.get('REQU')!.fields.map((f) => [f.name, f.offset, f.width])).toEqual([
      ['TrackID', 13, 10],
      ['Induct', 23, 4],
    ]);
  });

  it('names overlapping fields and bytes no field describes', () => {
    expect(problemsOf((l) => Object.assign(nth(nth(l.Telegrams, 0).Fields, 1), { Offset: 20 }))).toEqual([
      expect.stringMatching(/REQU field "Induct" at offset 20 overlaps the field before it, which ends at 23/),
    ]);
    expect(problemsOf((l) => Object.assign(nth(nth(l.Telegrams, 0).Fields, 1), { Offset: 25 }))).toEqual([
      expect.stringMatching(/bytes 23-24 described by no field/),
    ]);
  });

  it('names a telegram longer than the fixed telegram length', () => {
    const problems = problemsOf((l) => Object.assign(l.Framing, { TelegramLength: 20 }));
    expect(problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/REQU\): header and fields need 27 bytes, more than Framing.TelegramLength 20/)]),
    );
  });

  it('names an unknown telegram type, a wrong direction and a contract that does not fit', () => {
    const problems = problemsOf((l) => {
      l.Telegrams.push({ Type: 'PING', Code: 'PING', Direction: 'Both', Fields: [] } as never);
      nth(l.Telegrams, 1).Direction = 'FromSorter';
      Object.assign(nth(l.Telegrams, 0), { Contract: 'VerifyDto' });
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/Type "PING" is not a telegram type; one of REQU, VERI/),
        expect.stringMatching(/\(ASGN\): Direction FromSorter, but ASGN goes ToSorter/),
        expect.stringMatching(/Contract "VerifyDto" is not what REQU carries \(InductDto\)/),
      ]),
    );
  });

  it('names a field mapped to no contract field, or to one its type does not have, and contract fields nothing carries', () => {
    const problems = problemsOf((l) => {
      nth(nth(l.Telegrams, 0).Fields, 1).Maps = 'InductLocaton';
      delete (nth(nth(l.Telegrams, 1).Fields, 1) as { Maps?: string }).Maps;
    });
    expect(problems).toEqual([
      expect.stringMatching(
        /REQU field "Induct" maps "InductLocaton", which InductDto does not have \(TrackID, Barcode, MessageCode, InductLocation/,
      ),
      expect.stringMatching(/InductDto.InductLocation is carried by no field and given no constant/),
      expect.stringMatching(
        /ASGN field "Dest" maps to no contract field: give Maps \(one of TrackID, Barcode, Destination\) or make it spare/,
      ),
    ]);
  });

  it('names enum maps that do not reach the contract', () => {
    const problems = problemsOf((l) => {
      Object.assign(nth(nth(l.Telegrams, 2).Fields, 0), { Map: { R: 'Redy' } });
    });
    expect(problems).toEqual([
      expect.stringMatching(/Map value "Redy" is not one of Ready, NotReady/),
      expect.stringMatching(/Map has no wire value for Ready, NotReady, which the service sends/),
    ]);
  });

  it('names a handshake with nowhere to go and roles that are missing', () => {
    const problems = problemsOf((l) => {
      l.Header.splice(2, 2);
      l.Telegrams.pop();
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        "Header: no field has Role Type, so a telegram's type cannot be told",
        'Handshake.By is flag, but no header field has Role Handshake',
        expect.stringMatching(/a NAK's code has nowhere to go/),
      ]),
    );
  });

  it('names widths that cannot hold their values', () => {
    const problems = problemsOf((l) => {
      l.Sequence.Last = 99999;
      nth(l.Telegrams, 0).Code = 'REQUEST';
      l.Header[0] = { Name: 'Len', Role: 'Length', Kind: 'int', Width: 1 };
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'Sequence.Last 99999 does not fit the 4-digit Sequence field',
        expect.stringMatching(/Code "REQUEST" is longer than its 4 characters/),
        expect.stringMatching(/"Len" \(Role Length\) cannot say 24, the length of the longest telegram/),
      ]),
    );
  });

  it('lists every problem of the shape at once, as for config.json', () => {
    const problems = problemsOf((l) => {
      Object.assign(l, { Charset: 'utf8', Resync: 'sometimes' });
      Object.assign(nth(l.Header, 1), { Width: 0 });
    });
    expect(problems).toEqual([
      '"Charset" must be one of [ascii, latin1]',
      '"Header[1].Width" must be greater than or equal to 1',
      '"Resync" must be one of [SYNS, none]',
    ]);
  });

  it('loads a file, refusing JSON errors and twice-given keys with the file named', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
    try {
      const file = path.join(dir, 'l.json');
      fs.writeFileSync(file, JSON.stringify(base()));
      expect(loadLayout(file).name).toBe('test');
      fs.writeFileSync(file, '{"Name": "a", "Name": "b"}');
      expect(() => loadLayout(file)).toThrow(/"Name" is given more than once/);
      fs.writeFileSync(file, '{');
      expect(() => loadLayout(file)).toThrow(LayoutError);
      expect(() => loadLayout(path.join(dir, 'missing.json'))).toThrow(/missing.json is not a usable layout:\n {2}- cannot be read/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
