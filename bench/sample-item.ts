// The parcel the benchmark's storage probes write again and again: one REQUEST and its VERIFY,
// with the contract's example values, only the TrackID changing.
import type { InductDto, VerifyDto } from '../model/messages';

/** The probes' barcode and destination (also in the rows they write by SQL). */
export const SAMPLE_BARCODE = '4006381333931';
export const SAMPLE_DESTINATION = 'D12';

/** The REQUEST of the parcel `trackId`. */
export const sampleRequest = (trackId: string): InductDto => ({
  Type: 'REQUEST',
  TrackID: trackId,
  Barcode: SAMPLE_BARCODE,
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 320.5,
  Width: 210,
  Height: 95,
  Weight: 1.25,
});

/** The VERIFY of the parcel `trackId`. */
export const sampleVerify = (trackId: string): VerifyDto => ({
  Type: 'VERIFY',
  TrackID: trackId,
  Barcode: SAMPLE_BARCODE,
  Destination: SAMPLE_DESTINATION,
  MessageCode: 212,
});
