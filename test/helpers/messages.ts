// Test helper: a sorter's REQUEST as the tests build it, with the fields a test cares about given.
import type { InductDto } from '../../model/messages';

/** A REQUEST for `trackId` from IND01, first pass, small dimensions; `fields` replace any of them. */
export const induct = (trackId: string, fields: Partial<Omit<InductDto, 'Type' | 'TrackID'>> = {}): InductDto => ({
  Type: 'REQUEST',
  TrackID: trackId,
  Barcode: '',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 1,
  Width: 2,
  Height: 3,
  Weight: 4,
  ...fields,
});
