// The telegram codec: layouts, headers, NAK data, round trips and refusals.
import type { DestinationInfoDto, InductDto, VerifyDto } from '../../model/messages';
import {
  ETX,
  STX,
  TelegramError,
  dataWidth,
  encodeContent,
  encodeData,
  encodeFrame,
  nextSequence,
  outboundData,
  parseContent,
  sorterMessageData,
  sorterMessageOf,
} from '../../bench/v1-codec';

const induct: InductDto = {
  Type: 'REQUEST',
  TrackID: '0004711',
  Barcode: '00012345678901234567',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 2,
  Length: 320.5,
  Width: 210,
  Height: 95,
  Weight: 1.25,
};
const verify: VerifyDto = { Type: 'VERIFY', TrackID: '0004711', Barcode: '', Destination: 'D017', MessageCode: 212 };
const scan: DestinationInfoDto = {
  Type: 'SCAN',
  Destination: 'D017',
  DestinationStatus: 'NotReady',
  DestinationText: 'Tour 17',
  LightStatus: 'Flashing',
  LightColor: 'BLUE',
  ButtonID: 3,
  MessageCode: 211,
  BatchDoorStatus: 'OPENED',
};

const telegram = (m: InductDto | VerifyDto | DestinationInfoDto, seq = 42) => ({
  sender: 'PLC01',
  receiver: 'WCS01',
  seq,
  flag: 'D' as const,
  ...sorterMessageData(m),
});

describe('telegram codec', () => {
  it.each([induct, verify, scan])('round-trips a $Type message through a frame, keeping identifiers as strings', (m) => {
    const frame = encodeFrame(telegram(m));
    expect(frame.startsWith(STX) && frame.endsWith(ETX)).toBe(true);
    const parsed = parseContent(frame.slice(1, -1));
    expect(parsed).toMatchObject({ sender: 'PLC01', receiver: 'WCS01', seq: 42, flag: 'D' });
    expect(sorterMessageOf(parsed)).toEqual(m);
  });

  it('writes a length equal to the content length and fixed-width data', () => {
    const content = encodeContent(telegram(induct));
    expect(Number(content.slice(0, 4))).toBe(content.length);
    expect(content.length).toBe(27 + dataWidth('REQU'));
    expect(content.slice(16, 22)).toBe('000042');
  });

  it('encodes assignments and destination settings', () => {
    const asgn = outboundData({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Barcode: '', Destination: 'D017' } });
    expect(asgn.type).toBe('ASGN');
    expect(asgn.data).toHaveLength(dataWidth('ASGN'));
    expect(asgn.data.startsWith('0004711 ')).toBe(true);
    const dset = outboundData({
      kind: 'DESTINATION',
      body: {
        Destination: 'D1',
        DestinationStatus: 'Ready',
        DestinationText: '',
        LightStatus: 'Off',
        LightColor: 'Off',
        BatchDoorStatus: null,
      },
    });
    expect(dset.data).toHaveLength(dataWidth('DSET'));
  });

  it('refuses values that do not fit instead of truncating them', () => {
    expect(() => encodeData('ASGN', { TrackID: 'x'.repeat(21), Barcode: '', Destination: 'D1' })).toThrow(TelegramError);
    expect(() => encodeData('ASGN', { TrackID: 'Grüße', Barcode: '', Destination: 'D1' })).toThrow(/printable ASCII/);
    expect(() => encodeData('ASGN', { TrackID: 'a ', Barcode: '', Destination: 'D1' })).toThrow(/trailing space/);
  });

  it('names the field that does not parse', () => {
    const content = encodeContent(telegram(scan));
    const broken = content.replace('NotReady', 'Broken  ');
    expect(() => sorterMessageOf(parseContent(broken))).toThrow(/DestinationStatus/);
    expect(() => parseContent('0999' + content.slice(4))).toThrow(/Length/);
    expect(() => parseContent(content.slice(0, 22) + 'XXXX' + content.slice(26))).toThrow(/Type/);
  });

  it('wraps sequence numbers from 999999 to 1', () => {
    expect(nextSequence(1)).toBe(2);
    expect(nextSequence(999999)).toBe(1);
  });
});
