// Protocol version 1 written by hand: header, fixed-width data, NAK data, and the sorter messages
// they carry. The service speaks every layout through lib/layout/; this independent codec is the
// benchmark's baseline and what tests use to craft and read telegrams without the layout engine.
import { BatchDoorStatus, DestinationStatus, LightColor, LightStatus, isExactEnum } from '../model/enums';
import { FieldWidth, PrintableAscii } from '../lib/telegram/fields';
import {
  ETX,
  MAX_SEQUENCE,
  NakReason,
  STX,
  type Telegram,
  TelegramError,
  type TelegramFlag,
  type TelegramType,
  TelegramTypes,
  nextSequence,
} from '../lib/telegram/telegram';
export {
  ETX,
  MAX_SEQUENCE,
  NakReason,
  STX,
  type Telegram,
  TelegramError,
  type TelegramFlag,
  type TelegramType,
  TelegramTypes,
  nextSequence,
};
import type { Assignment, DestinationInfoDto, DestinationSetting, InductDto, VerifyDto } from '../model/messages';

/**
 * The sorter telegram codec (docs/sorter-protocol.md, protocol version 1): printable ASCII
 * between STX and ETX, a fixed 27-character header, then fixed-width data fields.
 */
export const HEADER_WIDTH = 27;

/** A field of a data layout: its width and how it is written. */
type FieldKind = 'text' | 'int' | 'decimal' | 'enum';
interface FieldSpec {
  name: string;
  width: number;
  kind: FieldKind;
  values?: readonly string[];
  /** Blank allowed and means null (enum) or "" (text). */
  optional?: boolean;
}

const text = (name: keyof typeof FieldWidth, optional = true): FieldSpec => ({ name, width: FieldWidth[name], kind: 'text', optional });
const int = (name: string, width: number): FieldSpec => ({ name, width, kind: 'int' });
const decimal = (name: string): FieldSpec => ({ name, width: 9, kind: 'decimal' });
const enumField = (name: string, values: readonly string[], width: number, optional = false): FieldSpec => ({
  name,
  width,
  kind: 'enum',
  values,
  optional,
});

/** The data layouts, field by field, in wire order. docs/sorter-protocol.md prints these tables. */
export const Layouts = {
  REQU: [
    int('MessageCode', 5),
    text('TrackID', false),
    text('Barcode'),
    text('InductLocation', false),
    int('RecirculationCount', 3),
    decimal('Length'),
    decimal('Width'),
    decimal('Height'),
    decimal('Weight'),
  ],
  VERI: [int('MessageCode', 5), text('TrackID', false), text('Barcode'), text('Destination', false)],
  SCAN: [
    int('MessageCode', 5),
    text('Destination', false),
    enumField('DestinationStatus', DestinationStatus, 8),
    enumField('LightStatus', LightStatus, 8),
    enumField('LightColor', LightColor, 8),
    int('ButtonID', 3),
    enumField('BatchDoorStatus', BatchDoorStatus, 6, true),
    text('DestinationText'),
  ],
  ASGN: [text('TrackID', false), text('Barcode'), text('Destination', false)],
  DSET: [
    text('Destination', false),
    enumField('DestinationStatus', DestinationStatus, 8),
    enumField('LightStatus', LightStatus, 8),
    enumField('LightColor', LightColor, 8),
    enumField('BatchDoorStatus', BatchDoorStatus, 6, true),
    text('DestinationText'),
  ],
  LIFE: [],
  SYNS: [{ name: 'Epoch', width: 12, kind: 'text' }, int('NextSeq', 6)],
  SYNE: [],
} satisfies Record<TelegramType, FieldSpec[]>;

/** Width of a type's data part. */
export function dataWidth(type: TelegramType): number {
  return Layouts[type].reduce((sum, f) => sum + f.width, 0);
}

const pad = (s: string, width: number) => s + ' '.repeat(width - s.length);

function encodeField(spec: FieldSpec, value: unknown): string {
  let s: string;
  switch (spec.kind) {
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        throw new TelegramError(spec.name, String(value), 'a non-negative integer');
      s = String(value).padStart(spec.width, '0');
      break;
    case 'decimal':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new TelegramError(spec.name, String(value), 'a non-negative decimal');
      s = String(value).padStart(spec.width, '0');
      if (s.includes('e')) throw new TelegramError(spec.name, String(value), `a decimal of at most ${spec.width} characters`);
      break;
    default:
      s = value === null || value === undefined ? '' : String(value);
      if (!PrintableAscii.test(s)) throw new TelegramError(spec.name, s, 'printable ASCII');
      if (s.endsWith(' ')) throw new TelegramError(spec.name, s, 'no trailing space');
  }
  if (s.length > spec.width) throw new TelegramError(spec.name, String(value), `at most ${spec.width} characters`);
  return pad(s, spec.width);
}

function decodeField(spec: FieldSpec, raw: string): unknown {
  const trimmed = raw.replace(/ +$/, '');
  switch (spec.kind) {
    case 'int':
      if (!/^\d+$/.test(raw)) throw new TelegramError(spec.name, raw, `${spec.width} digits`);
      return Number(raw);
    case 'decimal':
      if (!/^\d+(\.\d+)?$/.test(raw)) throw new TelegramError(spec.name, raw, `a zero-padded decimal of ${spec.width} characters`);
      return Number(raw);
    case 'enum':
      if (trimmed === '' && spec.optional) return null;
      // An enum's spec lists its values (lib/telegram/fields.ts).
      if (!isExactEnum(spec.values ?? [], trimmed)) throw new TelegramError(spec.name, trimmed, `one of ${(spec.values ?? []).join(', ')}`);
      return trimmed;
    default:
      if (trimmed === '' && !spec.optional) throw new TelegramError(spec.name, raw, 'a value');
      return trimmed;
  }
}

/** Fixed-width data for a telegram type from an object holding its fields. */
export function encodeData(type: TelegramType, values: object): string {
  const record = values as Record<string, unknown>;
  return Layouts[type].map((spec) => encodeField(spec, record[spec.name])).join('');
}

/** The fields of a telegram's data part; throws TelegramError naming the first bad field. */
export function decodeData(type: TelegramType, data: string): Record<string, unknown> {
  const expected = dataWidth(type);
  if (data.length !== expected) throw new TelegramError('data', data, `${expected} characters for ${type}`);
  const out: Record<string, unknown> = {};
  let at = 0;
  for (const spec of Layouts[type]) {
    out[spec.name] = decodeField(spec, data.slice(at, at + spec.width));
    at += spec.width;
  }
  return out;
}

/** The text between STX and ETX for a telegram. */
export function encodeContent(t: Telegram): string {
  const body = `${pad(t.sender, 6)}${pad(t.receiver, 6)}${String(t.seq).padStart(6, '0')}${t.type}${t.flag}${t.data}`;
  return `${String(body.length + 4).padStart(4, '0')}${body}`;
}

/** A whole frame, STX to ETX, ready for the socket. */
export function encodeFrame(t: Telegram): string {
  return `${STX}${encodeContent(t)}${ETX}`;
}

/** Parse the text between STX and ETX; throws TelegramError on any header problem. */
export function parseContent(content: string): Telegram {
  if (!PrintableAscii.test(content)) throw new TelegramError('telegram', content, 'printable ASCII');
  if (content.length < HEADER_WIDTH) throw new TelegramError('header', content, `at least ${HEADER_WIDTH} characters`);
  const length = content.slice(0, 4);
  if (!/^\d{4}$/.test(length) || Number(length) !== content.length) {
    throw new TelegramError('Length', length, `4 digits equal to the telegram length ${content.length}`);
  }
  const seq = content.slice(16, 22);
  if (!/^\d{6}$/.test(seq)) throw new TelegramError('Sequence', seq, '6 digits');
  const type = content.slice(22, 26) as TelegramType;
  if (!TelegramTypes.includes(type)) throw new TelegramError('Type', type, `one of ${TelegramTypes.join(', ')}`);
  const flag = content.charAt(26);
  if (flag !== 'D' && flag !== 'A' && flag !== 'N') throw new TelegramError('Flag', flag, 'D, A or N');
  return {
    sender: content.slice(4, 10).trimEnd(),
    receiver: content.slice(10, 16).trimEnd(),
    seq: Number(seq),
    type,
    flag,
    data: content.slice(HEADER_WIDTH),
  };
}

/**
 * The queue message carried by a REQU, VERI or SCAN data telegram. Written apart from
 * lib/layout/wire.ts's on purpose: the tests read the service's telegrams with this one, and a
 * mapping shared by both would hide a field mixed up in it.
 */
export function sorterMessageOf(t: Telegram): InductDto | VerifyDto | DestinationInfoDto {
  const f = decodeData(t.type, t.data);
  switch (t.type) {
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
    default:
      throw new TelegramError('Type', t.type, 'REQU, VERI or SCAN');
  }
}

/** Data for the telegram that carries a sorter message (the emulator's and the tests' side). */
export function sorterMessageData(m: InductDto | VerifyDto | DestinationInfoDto): { type: TelegramType; data: string } {
  const type: TelegramType = m.Type === 'REQUEST' ? 'REQU' : m.Type === 'VERIFY' ? 'VERI' : 'SCAN';
  return { type, data: encodeData(type, m) };
}

/** Data for an assignment (ASGN) or destination settings (DSET) telegram. */
export function outboundData(m: { kind: 'ASSIGNMENT'; body: Assignment } | { kind: 'DESTINATION'; body: DestinationSetting }): {
  type: TelegramType;
  data: string;
} {
  return m.kind === 'ASSIGNMENT' ? { type: 'ASGN', data: encodeData('ASGN', m.body) } : { type: 'DSET', data: encodeData('DSET', m.body) };
}

/** Data of a negative acknowledgement: a 2-digit reason code and a 40-character text. */
export const NAK_TEXT_WIDTH = 40;

/** NAK data for a reason; the text is cut to its field (it is a diagnostic, not data). */
export function nakData(code: number, text: string): string {
  const printable = text
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, NAK_TEXT_WIDTH)
    .replace(/ +$/, '');
  return String(code).padStart(2, '0') + pad(printable, NAK_TEXT_WIDTH);
}

/** Code and text of a NAK's data. */
export function parseNak(data: string): { code: number; text: string } {
  return { code: Number(data.slice(0, 2)) || 0, text: data.slice(2).trimEnd() };
}

/** The sequence number in a telegram's header, even when the rest does not parse (0 if it is unreadable). */
export function sequenceOf(content: string): number {
  const seq = content.slice(16, 22);
  return /^\d{6}$/.test(seq) ? Number(seq) : 0;
}
