// The telegram text fields' widths and character rules (lib/telegram/fields.ts), part of the
// public contract: the HTTP edge refuses what would not survive the round trip.
import { FieldWidth, NoTrailingSpace, PrintableAscii } from '../../../lib/telegram/fields';

it('widths as docs/sorter-protocol.md prints them', () => {
  expect(FieldWidth).toEqual({ TrackID: 20, Barcode: 48, Destination: 12, InductLocation: 12, DestinationText: 40 });
});

it('printable ASCII only, and no trailing space (padding would eat it)', () => {
  for (const ok of ['', 'D001', 'Tour 17', ' lead', '~!@#'])
    expect([ok, PrintableAscii.test(ok) && NoTrailingSpace.test(ok)]).toEqual([ok, true]);
  for (const bad of ['Straße', 'tab\there', 'line\n', '\x7f']) expect([bad, PrintableAscii.test(bad)]).toEqual([bad, false]);
  for (const bad of ['D001 ', ' ']) expect([bad, NoTrailingSpace.test(bad)]).toEqual([bad, false]);
});
