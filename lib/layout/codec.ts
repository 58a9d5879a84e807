// The layout-driven codec: header and data of any layout (lib/layout/schema.ts), as bytes, and
// below it one field as bytes and back, by its kind (text, int, decimal, enum, bin, fixed, spare),
// knowing nothing of headers or telegram types. Values that do not fit are refused with a
// TelegramError naming the field, never cut (a NAK's text excepted: a diagnostic).
import { TelegramError } from '../telegram/telegram';
import type { LogicalType } from '../telegram/contract';
import { isLogicalType } from './schema';
import { type Field, type Layout, type TelegramSpec, charsetPattern, constantOf, mapOf, reverseOf } from './table';
import { readableBytes } from './text';

/** D = data, A = acknowledgement, N = negative acknowledgement. */
export type Flag = 'D' | 'A' | 'N';

/** A telegram as a layout carries it: the header's values and the bytes after the header. */
export interface WireTelegram {
  sender: string;
  receiver: string;
  seq: number;
  /** The telegram's own type (ACK or NAK where the layout answers with telegrams of their own). */
  type: LogicalType;
  flag: Flag;
  /** The header's Code field (a NAK's reason), null where it is blank or absent. */
  code: number | null;
  /** Everything after the header (with a fixed telegram length: up to its end, padding included). */
  data: Buffer;
}

/**
 * Encodes and decodes the telegrams of one layout: the header by role, the data by telegram type,
 * the framing characters; each field by its kind (below).
 */
export class LayoutCodec {
  private readonly rules: FieldRules;

  constructor(readonly layout: Layout) {
    this.rules = fieldRules(layout);
  }

  /** The description of a telegram type; throws if the layout has none. */
  spec(type: LogicalType): TelegramSpec {
    const spec = this.layout.telegrams.get(type);
    if (!spec) throw new TelegramError('Type', type, `a type this layout describes (${[...this.layout.telegrams.keys()].join(', ')})`);
    return spec;
  }

  /** The sequence number after `seq`: 1..Last, wrapping to 1. */
  nextSequence(seq: number): number {
    return seq >= this.layout.sequence.last ? 1 : seq + 1;
  }

  /** A field's value from its bytes; throws TelegramError naming the field. */
  decodeField(f: Field, raw: Buffer): unknown {
    return decodeField(this.rules, f, raw);
  }

  /** The data part of a telegram type (header excluded, no padding) from its contract values. */
  encodeData(type: LogicalType, values: object): Buffer {
    const spec = this.spec(type);
    const record = values as Record<string, unknown>;
    const out = Buffer.alloc(spec.dataWidth, this.layout.fill);
    for (const f of spec.fields) {
      const value = f.maps === 'AckType' ? this.codeOf(f, record.AckType) : f.maps === undefined ? undefined : record[f.maps];
      writeField(this.rules, f, value, out, f.offset - this.layout.headerWidth);
    }
    return out;
  }

  /** The contract values of a telegram's data part (constants included); throws TelegramError naming the first bad field. */
  decodeData(type: LogicalType, data: Buffer): Record<string, unknown> {
    const spec = this.spec(type);
    const { telegramLength } = this.layout.framing;
    if (telegramLength === null ? data.length !== spec.dataWidth : data.length < spec.dataWidth) {
      throw new TelegramError('data', this.shown(data), `${spec.dataWidth} ${this.layout.binary ? 'bytes' : 'characters'} for ${type}`);
    }
    const out: Record<string, unknown> = Object.assign({}, spec.constants); // not a spread: lib/host/merged.ts
    for (const f of spec.fields) {
      const at = f.offset - this.layout.headerWidth;
      const value = readField(this.rules, f, data, at);
      if (f.maps === 'AckType') out.AckType = this.typeOfCode(f, value);
      else if (f.maps !== undefined) out[f.maps] = value;
    }
    return out;
  }

  /** A telegram's bytes between the framing characters. */
  encodeContent(t: WireTelegram): Buffer {
    const content = Buffer.alloc(this.contentLength(t), this.layout.fill);
    this.writeContent(t, content);
    return content;
  }

  /** A whole telegram, framing characters included, ready for the socket: one buffer, written field by field. */
  encodeFrame(t: WireTelegram): Buffer {
    const { start, end } = this.layout.framing;
    const length = this.contentLength(t);
    const frame = Buffer.alloc(start.length + length + end.length, this.layout.fill);
    start.copy(frame, 0);
    end.copy(frame, start.length + length);
    this.writeContent(t, frame.subarray(start.length, start.length + length));
    return frame;
  }

  /** The length of a telegram's content: its header and data, or the layout's fixed telegram length. */
  private contentLength(t: WireTelegram): number {
    const { headerWidth, framing } = this.layout;
    const length = headerWidth + t.data.length;
    if (framing.telegramLength === null) return length;
    if (length > framing.telegramLength)
      throw new TelegramError('telegram', t.type, `at most ${framing.telegramLength} bytes (Framing.TelegramLength)`);
    return framing.telegramLength;
  }

  /** Header and data into `content` (contentLength long, filled with the layout's fill). */
  private writeContent(t: WireTelegram, content: Buffer): void {
    const { header, headerWidth, roles } = this.layout;
    t.data.copy(content, headerWidth);
    for (const f of header) {
      if (f.role === 'Length') continue;
      writeField(this.rules, f, this.headerValue(f, t), content, f.offset);
    }
    const length = roles.Length;
    if (length)
      writeField(
        this.rules,
        length,
        length.counts === 'telegram' ? content.length : content.length - length.offset - length.width,
        content,
        length.offset,
      );
  }

  /** The header of a telegram's content (between the framing characters); throws TelegramError on any problem. */
  parseContent(content: Buffer): WireTelegram {
    const { headerWidth, roles, framing, handshake } = this.layout;
    const unit = this.layout.binary ? 'bytes' : 'characters';
    if (!this.layout.binary && !this.rules.text.test(content.toString('latin1')))
      throw new TelegramError('telegram', content.toString('latin1'), charsetName(this.layout.charset));
    if (content.length < headerWidth) throw new TelegramError('header', this.shown(content), `at least ${headerWidth} ${unit}`);
    if (framing.telegramLength !== null && content.length !== framing.telegramLength)
      throw new TelegramError('telegram', this.shown(content), `${framing.telegramLength} ${unit}`);
    const raw = (f: Field) => content.subarray(f.offset, f.offset + f.width);
    if (roles.Length) {
      const f = roles.Length;
      const want = f.counts === 'telegram' ? content.length : content.length - f.offset - f.width;
      let got: unknown;
      try {
        got = readField(this.rules, f, content, f.offset);
      } catch {
        got = undefined;
      }
      if (got !== want)
        throw new TelegramError(
          f.name,
          this.shown(raw(f)),
          `${f.width} ${f.kind === 'bin' ? 'bytes' : 'digits'} equal to the telegram length ${want}`,
        );
    }
    const t: WireTelegram = { sender: '', receiver: '', seq: 0, type: 'LIFE', flag: 'D', code: null, data: content.subarray(headerWidth) };
    for (const f of this.layout.header) {
      if (f.role === 'Length') continue;
      const value = readField(this.rules, f, content, f.offset);
      switch (f.role) {
        case 'Sender':
          t.sender = String(value); // a text field's value
          break;
        case 'Receiver':
          t.receiver = String(value);
          break;
        case 'Sequence':
          t.seq = Number(value); // an int field's value
          break;
        case 'Type': {
          const spec = this.layout.byCode.get(String(value));
          if (!spec) throw new TelegramError(f.name, this.shown(raw(f)), `one of ${[...this.layout.byCode.keys()].join(', ')}`);
          t.type = spec.type;
          break;
        }
        case 'Handshake': {
          const flags = flagsOf(handshake);
          const flag = (['D', 'A', 'N'] as const).find((k) => flags[k] === String(value));
          if (!flag) throw new TelegramError(f.name, this.shown(raw(f)), `${flags.D}, ${flags.A} or ${flags.N}`);
          t.flag = flag;
          break;
        }
        case 'Code':
          // 0 or blank: no refusal.
          t.code = value === '' || value === 0 ? null : Number(value);
          break;
      }
    }
    if (handshake.by === 'type') t.flag = t.type === 'ACK' ? 'A' : t.type === 'NAK' ? 'N' : 'D';
    return t;
  }

  /**
   * Code and text of a NAK, read leniently (it is a diagnostic: a code that does not read is 0):
   * the code from the header's Code field or the NAK's data, the text to the end of the data.
   */
  parseNak(t: WireTelegram): { code: number; text: string } {
    const spec = this.layout.telegrams.get('NAK');
    const at = (f: Field) => f.offset - this.layout.headerWidth;
    const codeField = spec?.fields.find((f) => f.maps === 'Code');
    const textField = spec?.fields.find((f) => f.maps === 'Text');
    let code = t.code ?? 0;
    if (t.code === null && codeField) {
      const raw = t.data.subarray(at(codeField), at(codeField) + codeField.width);
      code =
        codeField.kind === 'bin'
          ? raw.length === codeField.width
            ? raw.readUIntBE(0, raw.length)
            : 0
          : Number(raw.toString('latin1')) || 0;
    }
    let text = '';
    if (textField) {
      const last = textField === spec?.fields.at(-1) && this.layout.framing.telegramLength === null;
      const raw = t.data.subarray(at(textField), last ? undefined : at(textField) + textField.width);
      text = unpadded(textField, raw.toString('latin1')).trimEnd();
      if (this.layout.binary) text = readableBytes(Buffer.from(text, 'latin1'));
    }
    return { code: Number.isSafeInteger(code) ? code : 0, text };
  }

  /** The sequence number in a telegram's header, even when the rest does not parse (0 if it is unreadable). */
  sequenceOf(content: Buffer): number {
    const f = this.layout.roles.Sequence;
    if (!f || content.length < f.offset + f.width) return 0;
    try {
      return Number(this.decodeField(f, content.subarray(f.offset, f.offset + f.width)));
    } catch {
      return 0;
    }
  }

  /** Bytes in a message: as they are for a text layout, readably for a binary one. */
  private shown(bytes: Buffer): string {
    return shownBytes(this.rules, bytes);
  }

  private headerValue(f: Field, t: WireTelegram): unknown {
    switch (f.role) {
      case 'Sender':
        return t.sender;
      case 'Receiver':
        return t.receiver;
      case 'Sequence':
        return t.seq;
      case 'Type':
        return this.wireNumber(f, this.spec(t.type).code);
      case 'Handshake':
        return this.wireNumber(f, flagsOf(this.layout.handshake)[t.flag]);
      case 'Code':
        return t.code ?? (f.kind === 'text' ? '' : 0);
      default:
        return undefined;
    }
  }

  /** A code or flag as the field's encoder takes it: a number for int and bin fields. */
  private wireNumber(f: Field, value: string): string | number {
    return f.kind === 'int' || f.kind === 'bin' ? Number(value) : value;
  }

  /** A type as an AckType field writes it: its code, or blank (0) for none (a telegram that did not parse). */
  private codeOf(f: Field, type: unknown): string | number {
    if (type === undefined || type === null) return f.kind === 'text' ? '' : 0;
    const spec = typeof type === 'string' && isLogicalType(type) ? this.layout.telegrams.get(type) : undefined;
    if (!spec) throw new TelegramError('AckType', String(type), 'a type this layout describes');
    return /^\d+$/.test(spec.code) ? Number(spec.code) : spec.code;
  }

  private typeOfCode(f: Field, value: unknown): LogicalType | null {
    if (value === '' || value === undefined || value === 0) return null;
    const spec = this.layout.byCode.get(String(value));
    if (!spec) throw new TelegramError(f.name, String(value), `one of ${[...this.layout.byCode.keys()].join(', ')}`);
    return spec.type;
  }
}

/** The Handshake field's values for data, ACK and NAK, in a layout whose handshake is by flag. */
function flagsOf(handshake: Layout['handshake']): { D: string; A: string; N: string } {
  if (!handshake.flags) throw new Error('the layout has no handshake flags (its handshake is by telegram type)');
  return handshake.flags;
}

// One field as bytes and back.

/** What a field's bytes depend on besides the field itself: the layout's characters and its framing. */
export interface FieldRules {
  charset: Layout['charset'];
  /** The whole of a text value in the layout's character set. */
  text: RegExp;
  /** Where telegrams are cut at the end character, a value must not contain it. */
  forbidden: Buffer | null;
  /** Bytes in messages are shown readably (hex escapes) rather than as they are. */
  binary: boolean;
}

/** The field rules of a layout. */
export function fieldRules(layout: Layout): FieldRules {
  const { end, telegramLength } = layout.framing;
  // A length field or a fixed telegram length says where a telegram ends: then the end character may appear in values.
  const forbidden = end.length > 0 && telegramLength === null && !layout.roles.Length ? end : null;
  return { charset: layout.charset, text: charsetPattern(layout.charset), forbidden, binary: layout.binary };
}

const FILL_NAMES: Record<number, string> = { 0x20: 'space', 0x2e: '"."', 0x00: 'NUL' };
const fillName = (fill: number) => FILL_NAMES[fill] ?? JSON.stringify(String.fromCharCode(fill));

/** A character set as error messages name it. */
export const charsetName = (charset: 'ascii' | 'latin1') => (charset === 'ascii' ? 'printable ASCII' : 'printable Latin-1');

/** Bytes in a message: as they are for a text layout, readably for a binary one. */
export function shownBytes(r: FieldRules, bytes: Buffer): string {
  return r.binary ? readableBytes(bytes) : bytes.toString('latin1');
}

/** One field's bytes for a value; throws TelegramError if the value does not fit. */
export function encodeField(r: FieldRules, f: Field, value: unknown): Buffer {
  if (f.kind === 'fixed') return Buffer.from(constantOf(f));
  const out = Buffer.alloc(f.width, f.fill);
  writeField(r, f, value, out, 0);
  return out;
}

/**
 * One field's bytes for a value, written at `at` in `out` (a telegram being encoded: no buffer of
 * its own per field); throws TelegramError if the value does not fit, having written nothing.
 */
export function writeField(r: FieldRules, f: Field, value: unknown, out: Buffer, at: number): void {
  switch (f.kind) {
    case 'fixed':
      constantOf(f).copy(out, at);
      return;
    case 'spare':
      out.fill(f.fill, at, at + f.width);
      return;
    case 'bin':
      out.writeUIntBE(binaryOf(f, value), at, f.width);
      return;
    case 'int':
    case 'decimal': {
      let s: string;
      if (f.kind === 'decimal' && f.scale === null) {
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
          throw new TelegramError(f.name, String(value), 'a non-negative decimal');
        s = String(value);
        if (s.includes('e')) throw new TelegramError(f.name, String(value), `a decimal of at most ${f.width} characters`);
      } else s = String(scaled(f, value));
      if (s.length > f.width) throw new TelegramError(f.name, String(value), `at most ${f.width} characters`);
      writeAligned(f, s, out, at);
      return;
    }
    default: {
      let s: string;
      if (f.kind === 'enum') {
        const wanted = value === undefined || value === '' ? null : (value as string | null);
        const reverse = reverseOf(f);
        const wire = reverse.get(wanted);
        if (wire !== undefined) s = wire;
        else if (wanted === null && !f.required) s = '';
        else throw new TelegramError(f.name, String(value), `one of ${[...reverse.keys()].filter((k) => k !== null).join(', ')}`);
      } else {
        s = value === null || value === undefined ? '' : String(value);
        if (f.cut) s = diagnostic(r, f, s);
      }
      if (!r.text.test(s)) throw new TelegramError(f.name, s, charsetName(r.charset));
      if (r.forbidden && s.includes(r.forbidden.toString('latin1')))
        throw new TelegramError(f.name, s, `no ${JSON.stringify(r.forbidden.toString('latin1'))} (it ends a telegram)`);
      const fillChar = String.fromCharCode(f.fill);
      if (s.length > 0 && (f.align === 'left' ? s.endsWith(fillChar) : s.startsWith(fillChar)))
        throw new TelegramError(f.name, s, `no ${f.align === 'left' ? 'trailing' : 'leading'} ${fillName(f.fill)}`);
      if (s.length > f.width) throw new TelegramError(f.name, String(value), `at most ${f.width} characters`);
      writeAligned(f, s, out, at);
      return;
    }
  }
}

/** A bin field's number for a value (its map's wire value, or the value scaled); refused if it does not fit its bytes. */
function binaryOf(f: Field, value: unknown): number {
  let n: number;
  if (f.reverse) {
    const wire = f.reverse.get((value ?? null) as string | null);
    if (wire === undefined) throw new TelegramError(f.name, String(value), `one of ${[...f.reverse.keys()].map(String).join(', ')}`);
    n = Number(wire);
  } else n = scaled(f, value);
  if (n > 2 ** (8 * f.width) - 1)
    throw new TelegramError(
      f.name,
      String(value),
      `at most ${2 ** (8 * f.width) - 1}${f.scale ? ` / 10^${f.scale}` : ''} (${f.width} bytes)`,
    );
  return n;
}

/** A field's value from its bytes; throws TelegramError naming the field. */
export function decodeField(r: FieldRules, f: Field, raw: Buffer): unknown {
  return readField(r, f, raw, 0);
}

/**
 * A field's value from its bytes at `at` in a telegram (no buffer of its own per field); throws
 * TelegramError naming the field.
 */
export function readField(r: FieldRules, f: Field, bytes: Buffer, at: number): unknown {
  const end = at + f.width;
  switch (f.kind) {
    case 'spare':
      return undefined;
    case 'fixed':
      if (bytes.compare(constantOf(f), 0, constantOf(f).length, at, end) !== 0)
        throw new TelegramError(f.name, shownBytes(r, bytes.subarray(at, end)), `the constant ${readableBytes(constantOf(f))}`);
      return undefined;
    case 'bin': {
      const n = bytes.readUIntBE(at, f.width);
      if (f.map) {
        const v = f.map.get(String(n));
        if (v === undefined) throw new TelegramError(f.name, String(n), `one of ${[...f.map.keys()].join(', ')}`);
        return v;
      }
      return f.scale ? unscale(n, f.scale) : n;
    }
    case 'int':
    case 'decimal': {
      const wire = bytes.toString('latin1', at, end);
      const s = unpadded(f, wire);
      if (f.kind === 'decimal' && f.scale === null) {
        if (!/^\d+(\.\d+)?$/.test(s)) throw new TelegramError(f.name, wire, `a zero-padded decimal of ${f.width} characters`);
        return Number(s);
      }
      if (!/^\d+$/.test(s)) throw new TelegramError(f.name, wire, f.width === 1 ? 'a digit' : `${f.width} digits`);
      return f.scale ? unscale(Number(s), f.scale) : Number(s);
    }
    default: {
      const wire = bytes.toString('latin1', at, end);
      const s = unpadded(f, wire);
      if (!r.text.test(s)) throw new TelegramError(f.name, shownBytes(r, bytes.subarray(at, end)), charsetName(r.charset));
      if (f.kind === 'enum') {
        const map = mapOf(f);
        const v = map.get(s);
        if (v !== undefined) return v;
        if (s === '' && !f.required) return null;
        throw new TelegramError(f.name, s, `one of ${[...map.keys()].join(', ')}`);
      }
      if (s === '' && f.required) throw new TelegramError(f.name, wire, 'a value');
      return s;
    }
  }
}

/** A field's text without its padding (numbers zero-filled keep their zeros: "0000" is 0). */
export function unpadded(f: Field, s: string): string {
  const fill = String.fromCharCode(f.fill);
  if (fill === '0') return s;
  let a = 0;
  let b = s.length;
  if (f.align === 'left') while (b > 0 && s[b - 1] === fill) b--;
  else while (a < b && s[a] === fill) a++;
  return s.slice(a, b);
}

/** A number times 10^Scale as a whole number; refused if it has more decimals than that. */
function scaled(f: Field, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new TelegramError(f.name, String(value), f.scale ? 'a non-negative decimal' : 'a non-negative integer');
  const n = f.scale ? value * 10 ** f.scale : value;
  const whole = Math.round(n);
  if (f.scale ? Math.abs(n - whole) > 1e-6 * Math.max(1, Math.abs(n)) : !Number.isInteger(value)) {
    throw new TelegramError(f.name, String(value), f.scale ? `at most ${f.scale} decimals` : 'a non-negative integer');
  }
  if (!Number.isSafeInteger(whole)) throw new TelegramError(f.name, String(value), `at most ${f.width} characters`);
  return whole;
}

/** A value's characters into its field, padded with the field's fill on the side its alignment leaves. */
function writeAligned(f: Field, s: string, out: Buffer, at: number): void {
  out.fill(f.fill, at, at + f.width);
  if (s.length > 0) out.write(s, f.align === 'left' ? at : at + f.width - s.length, 'latin1');
}

/** A NAK's text: characters outside the set replaced, cut to its field, no padding at its end. */
function diagnostic(r: FieldRules, f: Field, s: string): string {
  const fill = String.fromCharCode(f.fill);
  let out = [...s]
    .map((c) => (r.text.test(c) ? c : '?'))
    .join('')
    .slice(0, f.width);
  if (r.forbidden) out = out.split(r.forbidden.toString('latin1')).join('?');
  while (out.endsWith(fill) || out.endsWith(' ')) out = out.slice(0, -1);
  return out;
}

/** n / 10^scale without binary fractions showing (1234 with scale 3 is 1.234). */
function unscale(n: number, scale: number): number {
  return Number((n / 10 ** scale).toFixed(scale));
}
