// The contract's messages in and out of a layout's data: the sorter's REQUEST, VERIFY and SCAN,
// the service's assignments and destination settings.
import type { LogicalType } from '../telegram/contract';
import { TelegramError } from '../telegram/telegram';
import type { LayoutCodec } from './codec';
import type { DestinationInfoDto, InductDto, OutboundMessage, VerifyDto } from '../../model/messages';

/** A message from the sorter. */
export type SorterDto = InductDto | VerifyDto | DestinationInfoDto;

/** The queue message carried by a REQU, VERI or SCAN telegram's data; throws TelegramError naming the first bad field. */
export function sorterMessageOf(codec: LayoutCodec, type: LogicalType, data: Buffer): SorterDto {
  if (type !== 'REQU' && type !== 'VERI' && type !== 'SCAN') throw new TelegramError('Type', type, 'REQU, VERI or SCAN');
  const f = codec.decodeData(type, data);
  switch (type) {
    case 'REQU':
      return {
        Type: 'REQUEST',
        TrackID: f.TrackID,
        Barcode: f.Barcode,
        MessageCode: f.MessageCode,
        InductLocation: f.InductLocation,
        RecirculationCount: f.RecirculationCount,
        Length: f.Length,
        Width: f.Width,
        Height: f.Height,
        Weight: f.Weight,
      } as InductDto;
    case 'VERI':
      return {
        Type: 'VERIFY',
        TrackID: f.TrackID,
        Barcode: f.Barcode,
        Destination: f.Destination,
        MessageCode: f.MessageCode,
      } as VerifyDto;
    case 'SCAN':
      return {
        Type: 'SCAN',
        Destination: f.Destination,
        DestinationStatus: f.DestinationStatus,
        DestinationText: f.DestinationText,
        LightStatus: f.LightStatus,
        LightColor: f.LightColor,
        ButtonID: f.ButtonID,
        MessageCode: f.MessageCode,
        BatchDoorStatus: f.BatchDoorStatus,
      } as DestinationInfoDto;
  }
}

/** Type and data of the telegram that carries a sorter message (the emulator's and the tests' side). */
export function sorterMessageData(codec: LayoutCodec, m: SorterDto): { type: LogicalType; data: Buffer } {
  const type: LogicalType = m.Type === 'REQUEST' ? 'REQU' : m.Type === 'VERIFY' ? 'VERI' : 'SCAN';
  return { type, data: codec.encodeData(type, m) };
}

/** Type and data of an assignment (ASGN) or destination settings (DSET) telegram; throws TelegramError if a value does not fit. */
export function outboundData(codec: LayoutCodec, m: OutboundMessage): { type: LogicalType; data: Buffer } {
  const type: LogicalType = m.kind === 'ASSIGNMENT' ? 'ASGN' : 'DSET';
  return { type, data: codec.encodeData(type, m.body) };
}
