// The message model: the DTOs of the HTTP contract, the queues they go to, and what travels to
// the sorter.
import type { BatchDoorStatusValue, DestinationStatusValue, LightColorValue, LightStatusValue } from './enums';

/** InductDto: a REQUEST, returned by GET /sortation with 210 (spec 2.1). */
export interface InductDto {
  Type: 'REQUEST';
  TrackID: string;
  Barcode: string;
  MessageCode: number;
  InductLocation: string;
  RecirculationCount: number;
  Length: number;
  Width: number;
  Height: number;
  Weight: number;
}

/** VerifyDto: a VERIFY, returned by GET /sortation with 212 (spec 2.3). */
export interface VerifyDto {
  Type: 'VERIFY';
  TrackID: string;
  Barcode: string;
  Destination: string;
  MessageCode: number;
}

/** DestinationInfoDto: a SCAN, returned by GET /destination with 211 (spec 2.4). */
export interface DestinationInfoDto {
  Type: 'SCAN';
  Destination: string;
  DestinationStatus: DestinationStatusValue;
  DestinationText: string;
  LightStatus: LightStatusValue;
  LightColor: LightColorValue;
  ButtonID: number;
  MessageCode: number;
  BatchDoorStatus: BatchDoorStatusValue | null;
}

/** Anything the sorter puts on the sortation queue. */
export type SortationMessage = InductDto | VerifyDto;
/** Anything the sorter puts on the destination queue. */
export type DestinationMessage = DestinationInfoDto;
/** Any sorter-to-WCS message. */
export type SorterMessage = SortationMessage | DestinationMessage;

/** The two queues and the messages each holds. */
export type QueueName = 'sortation' | 'destination';
export interface QueueMessages {
  sortation: SortationMessage;
  destination: DestinationMessage;
}

/** An assignment on its way to the sorter: the normalised POST /sortation body. */
export interface Assignment {
  TrackID: string;
  Destination: string;
  Barcode: string;
}

/** Destination settings on their way to the sorter: the normalised POST /destination body. */
export interface DestinationSetting {
  Destination: string;
  DestinationStatus: DestinationStatusValue;
  DestinationText: string;
  LightStatus: LightStatusValue;
  LightColor: LightColorValue;
  BatchDoorStatus: BatchDoorStatusValue | null;
}

/** One entry of the outbox: what the service must still deliver to the sorter. */
export type OutboundMessage = { kind: 'ASSIGNMENT'; body: Assignment } | { kind: 'DESTINATION'; body: DestinationSetting };

/** How a POSTed message travels on: written to the sorter, waiting in the outbox, or not at all (test mode). */
export const DeliveryStates = ['Sent', 'Queued', 'NotSent'] as const;
export type DeliveryState = (typeof DeliveryStates)[number];
