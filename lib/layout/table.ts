// A layout resolved into the table the codec uses: each field where it sits and how it is
// written (absolute offsets, fill bytes, maps both ways), and the wire values such a field can
// hold. check.ts builds the table from a layout file.
import type { Direction, LogicalType } from '../telegram/contract';
import type { FieldKind, HeaderRole, LayoutFile } from './schema';

/** A field ready for the codec: where it sits and how it is written. */
export interface Field {
  name: string;
  kind: FieldKind;
  /** First byte, counted from the telegram's first byte after the start character. */
  offset: number;
  width: number;
  role?: HeaderRole;
  maps?: string;
  align: 'left' | 'right';
  fill: number;
  required: boolean;
  scale: number | null;
  /** enum and bin: wire value to contract value, and back (the first wire value of each). */
  map: Map<string, string | null> | null;
  reverse: Map<string | null, string> | null;
  /** fixed: the bytes. */
  constant: Buffer | null;
  counts: 'telegram' | 'rest';
  /** A diagnostic, not data: cut to the field instead of refused (a NAK's text). */
  cut: boolean;
}

/** A telegram type ready for the codec. */
export interface TelegramSpec {
  type: LogicalType;
  code: string;
  direction: Direction;
  contract: string;
  fields: Field[];
  /** Bytes from the end of the header to the end of the last field. */
  dataWidth: number;
  constants: Record<string, unknown>;
}

/** A validated layout, as the codec, the session's wire and the commissioning tool use it. */
export interface Layout {
  name: string;
  description: string;
  charset: 'ascii' | 'latin1';
  fill: number;
  framing: { start: Buffer; end: Buffer; telegramLength: number | null; maxLength: number };
  header: Field[];
  headerWidth: number;
  roles: Partial<Record<HeaderRole, Field>>;
  sequence: { last: number; control: number };
  handshake: {
    ack: 'each' | 'none';
    by: 'flag' | 'type';
    flags: { D: string; A: string; N: string } | null;
    echo: 'header' | 'telegram';
    nakCodes: { Malformed: number; BadData: number; Unexpected: number; CannotStore: number };
    resendMs: number | null;
    window: number | null;
  };
  life: { intervalMs: number | null } | null;
  resync: boolean;
  telegrams: Map<LogicalType, TelegramSpec>;
  /** Telegram types by their code as the header's Type field holds it. */
  byCode: Map<string, TelegramSpec>;
  /** Has binary fields (or non-printable fill): the traffic log writes such bytes in hex. */
  binary: boolean;
  file: LayoutFile;
}

const CONTROL_NAMES: Record<string, string> = { NUL: '\x00', STX: '\x02', ETX: '\x03', EOT: '\x04', LF: '\n', CR: '\r', ETB: '\x17' };

/** A framing character as the file spells it: a literal, or control characters by name ("STX", "CR LF"). */
export function framingBytes(spec: string): Buffer {
  const names = spec.split(' ');
  if (spec !== '' && names.every((n) => n in CONTROL_NAMES)) return Buffer.from(names.map((n) => CONTROL_NAMES[n]).join(''), 'latin1');
  return Buffer.from(spec, 'latin1');
}

/** A fill character as the file spells it (NUL by name). */
export const fillByte = (spec: string): number => (spec === 'NUL' ? 0 : spec.charCodeAt(0));

/** The largest value a numeric field of this kind and width can hold. */
export function capacity(kind: FieldKind, width: number): number {
  if (kind === 'bin') return 2 ** (8 * Math.min(width, 6)) - 1;
  return 10 ** Math.min(width, 15) - 1;
}

/** Checks one wire value (a code, a flag, an enum key) against the field that carries it; a problem or null. */
export function wireValueProblem(f: Pick<Field, 'kind' | 'width'>, value: string, charset: 'ascii' | 'latin1'): string | null {
  if (f.kind === 'int' || f.kind === 'bin') {
    if (!/^\d+$/.test(value)) return `"${value}" is not a whole number, as a ${f.kind} field holds`;
    if (Number(value) > capacity(f.kind, f.width)) return `${value} does not fit ${f.width} ${f.kind === 'bin' ? 'bytes' : 'digits'}`;
    return null;
  }
  if (Buffer.byteLength(value, 'latin1') > f.width) return `"${value}" is longer than its ${f.width} characters`;
  if (!charsetPattern(charset).test(value)) return `"${value}" has characters outside the ${charset} character set`;
  return null;
}

/** The characters a text field may hold. */
export function charsetPattern(charset: 'ascii' | 'latin1'): RegExp {
  return charset === 'ascii' ? /^[\x20-\x7e]*$/ : /^[\x20-\x7e\xa0-\xff]*$/;
}

/** A fixed field's bytes (layout-check.ts gives every fixed field its constant). */
export function constantOf(f: Field): Buffer {
  if (!f.constant) throw new Error(`layout field "${f.name}" is ${f.kind} without its constant bytes`);
  return f.constant;
}

/** An enum field's wire values to contract values (layout-check.ts gives every enum field its map). */
export function mapOf(f: Field): Map<string, string | null> {
  if (!f.map) throw new Error(`layout field "${f.name}" is ${f.kind} without its map`);
  return f.map;
}

/** An enum field's contract values to wire values (made with its map). */
export function reverseOf(f: Field): Map<string | null, string> {
  if (!f.reverse) throw new Error(`layout field "${f.name}" is ${f.kind} without its map`);
  return f.reverse;
}
