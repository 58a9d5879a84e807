// The telegram as the session engine and the service see it, whatever the layout: its header
// fields and undecoded data, its types, the NAK reasons, and the error a field that does not
// encode or decode raises. Layouts (lib/layout/) map these onto a vendor's bytes.

/** Frame delimiters of protocol version 1 and of most layouts. */
export const STX = '\x02';
export const ETX = '\x03';
/** The highest sequence number; after it the numbering wraps to 1 (0 is never used). */
export const MAX_SEQUENCE = 999999;

/** Telegram types: sorter to service (REQU, VERI, SCAN), service to sorter (ASGN, DSET), both (LIFE, SYNS, SYNE). */
export const TelegramTypes = ['REQU', 'VERI', 'SCAN', 'ASGN', 'DSET', 'LIFE', 'SYNS', 'SYNE'] as const;
export type TelegramType = (typeof TelegramTypes)[number];
/** D = data, A = acknowledgement, N = negative acknowledgement. */
export type TelegramFlag = 'D' | 'A' | 'N';

/** A parsed telegram: header fields plus the undecoded data part. */
export interface Telegram {
  sender: string;
  receiver: string;
  seq: number;
  type: TelegramType;
  flag: TelegramFlag;
  data: string;
  /** An inbound telegram: when its bytes arrived (performance.now()), where decision and wake latencies start. */
  arrivedAt?: number;
  /** An inbound telegram: its data as read from the connection (`data` is the same as a byte string), decoded from these once. */
  dataBytes?: Buffer;
}

/** A decode or encode failure: which field, what was there, what was expected. */
export class TelegramError extends Error {
  constructor(
    readonly field: string,
    readonly value: string,
    readonly expected: string,
  ) {
    super(`${field}: got ${JSON.stringify(value)}, expected ${expected}`);
    this.name = 'TelegramError';
  }
}

/** Reasons of a negative acknowledgement: the 2-digit code in its data. */
export const NakReason = { MALFORMED: 1, BAD_DATA: 2, UNEXPECTED: 3, CANNOT_STORE: 4 } as const;

/** The sequence number after `seq`: 1..999999, wrapping to 1 (0 is never used). */
export function nextSequence(seq: number): number {
  return seq >= MAX_SEQUENCE ? 1 : seq + 1;
}

/**
 * What a frame decoder found in the byte stream: a framed telegram (its content as a byte string,
 * and as the bytes read where the decoder has them), or bytes it had to skip.
 */
export type Decoded = { kind: 'telegram'; content: string; raw?: Buffer } | { kind: 'garbage'; bytes: string; reason: string };
