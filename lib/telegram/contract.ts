// The protocol's telegram types and the contract fields each one carries: what a layout file
// (lib/layout/schema.ts) maps its wire fields to.
import { BatchDoorStatus, DestinationStatus, LightColor, LightStatus } from '../../model/enums';

/**
 * The telegram types the session engine speaks (docs/sorter-protocol.md): sorter to service
 * (REQU, VERI, SCAN), service to sorter (ASGN, DSET), both (LIFE, SYNS, SYNE), and the
 * handshake telegrams of a layout that acknowledges with a telegram type of its own (ACK, NAK).
 */
export const LogicalTypes = ['REQU', 'VERI', 'SCAN', 'ASGN', 'DSET', 'LIFE', 'SYNS', 'SYNE', 'ACK', 'NAK'] as const;
export type LogicalType = (typeof LogicalTypes)[number];

/** Who sends a telegram type. */
export type Direction = 'FromSorter' | 'ToSorter' | 'Both';

/** How a contract field's value looks: the wire kinds that can carry it follow from this ('type': a telegram type, written as its code). */
export type ValueKind = 'string' | 'integer' | 'number' | 'enum' | 'type';

/** One field of a contract: its value kind, its canonical values (enums), and whether it may be null or blank. */
export interface ContractField {
  kind: ValueKind;
  values?: readonly string[];
  /** null is a value of its own (BatchDoorStatus). */
  nullable?: boolean;
}

/** A contract: the DTO a telegram type carries and its fields. */
export interface Contract {
  name: string;
  direction: Direction;
  fields: Record<string, ContractField>;
}

const str: ContractField = { kind: 'string' };
const int: ContractField = { kind: 'integer' };
const num: ContractField = { kind: 'number' };
const oneOf = (values: readonly string[], nullable = false): ContractField => ({ kind: 'enum', values, nullable });

/**
 * The contract of each telegram type: the DTOs of model/messages.ts for the data telegrams, and
 * the protocol's own fields for the others (SYNS: the sender's session and oldest number; NAK: a
 * reason code and text; ACK and NAK: the type they answer, where the layout echoes it in data).
 */
export const Contracts: Record<LogicalType, Contract> = {
  REQU: {
    name: 'InductDto',
    direction: 'FromSorter',
    fields: {
      TrackID: str,
      Barcode: str,
      MessageCode: int,
      InductLocation: str,
      RecirculationCount: int,
      Length: num,
      Width: num,
      Height: num,
      Weight: num,
    },
  },
  VERI: { name: 'VerifyDto', direction: 'FromSorter', fields: { TrackID: str, Barcode: str, Destination: str, MessageCode: int } },
  SCAN: {
    name: 'DestinationInfoDto',
    direction: 'FromSorter',
    fields: {
      Destination: str,
      DestinationStatus: oneOf(DestinationStatus),
      DestinationText: str,
      LightStatus: oneOf(LightStatus),
      LightColor: oneOf(LightColor),
      ButtonID: int,
      MessageCode: int,
      BatchDoorStatus: oneOf(BatchDoorStatus, true),
    },
  },
  ASGN: { name: 'AssignmentDto', direction: 'ToSorter', fields: { TrackID: str, Barcode: str, Destination: str } },
  DSET: {
    name: 'DestinationSetDto',
    direction: 'ToSorter',
    fields: {
      Destination: str,
      DestinationStatus: oneOf(DestinationStatus),
      DestinationText: str,
      LightStatus: oneOf(LightStatus),
      LightColor: oneOf(LightColor),
      BatchDoorStatus: oneOf(BatchDoorStatus, true),
    },
  },
  LIFE: { name: 'Life', direction: 'Both', fields: {} },
  SYNS: { name: 'SyncStart', direction: 'Both', fields: { Epoch: str, NextSeq: int } },
  SYNE: { name: 'SyncEnd', direction: 'Both', fields: {} },
  ACK: { name: 'Ack', direction: 'Both', fields: { AckType: { kind: 'type' } } },
  NAK: { name: 'Nak', direction: 'Both', fields: { Code: int, Text: str, AckType: { kind: 'type' } } },
};

/** Contract fields the sorter's messages must carry on the wire or as a constant: everything the DTO has. */
export function requiredInbound(type: LogicalType): string[] {
  if (Contracts[type].direction !== 'FromSorter' && type !== 'SYNS') return [];
  return Object.keys(Contracts[type].fields);
}

/** The contract names a layout file may give for a type (its DTO). */
export const ContractNames = Object.fromEntries(LogicalTypes.map((t) => [t, Contracts[t].name])) as Record<LogicalType, string>;
