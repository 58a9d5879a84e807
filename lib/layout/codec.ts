// The layout-driven codec: header and data of any layout (lib/layout/schema.ts), as bytes.
import { TelegramError } from '../telegram/telegram';
import type { LogicalType } from '../telegram/contract';
import { isLogicalType } from './schema';
import { type Field, type Layout, type TelegramSpec, flagsOf } from './table';
import { type FieldRules, charsetName, decodeField, encodeField, fieldRules, shownBytes, unpadded } from './field-codec';
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
 * the framing characters; each field through field-codec.ts.
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

  /** One field's bytes for a value; throws TelegramError if the value does not fit. */
  encodeField(f: Field, value: unknown): Buffer {
    return encodeField(this.rules, f, value);
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
    for (const f of spec.fields)
      this.encodeField(f, f.maps === 'AckType' ? this.codeOf(f, record.AckType) : f.maps === undefined ? undefined : record[f.maps]).copy(
        out,
        f.offset - this.layout.headerWidth,
      );
    return out;
  }

  /** The contract values of a telegram's data part (constants included); throws TelegramError naming the first bad field. */
  decodeData(type: LogicalType, data: Buffer): Record<string, unknown> {
    const spec = this.spec(type);
    const { telegramLength } = this.layout.framing;
    if (telegramLength === null ? data.length !== spec.dataWidth : data.length < spec.dataWidth) {
      throw new TelegramError('data', this.shown(data), `${spec.dataWidth} ${this.layout.binary ? 'bytes' : 'characters'} for ${type}`);
    }
    const out: Record<string, unknown> = { ...spec.constants };
    for (const f of spec.fields) {
      const at = f.offset - this.layout.headerWidth;
      const value = this.decodeField(f, data.subarray(at, at + f.width));
      if (f.maps === 'AckType') out.AckType = this.typeOfCode(f, value);
      else if (f.maps !== undefined) out[f.maps] = value;
    }
    return out;
  }

  /** A telegram's bytes between the framing characters. */
  encodeContent(t: WireTelegram): Buffer {
    const { header, headerWidth, framing, roles } = this.layout;
    const parts = Buffer.alloc(headerWidth + t.data.length, this.layout.fill);
    t.data.copy(parts, headerWidth);
    const content = framing.telegramLength === null ? parts : this.padded(parts, framing.telegramLength, t);
    for (const f of header) {
      if (f.role === 'Length') continue;
      this.encodeField(f, this.headerValue(f, t)).copy(content, f.offset);
    }
    const length = roles.Length;
    if (length)
      this.encodeField(length, length.counts === 'telegram' ? content.length : content.length - length.offset - length.width).copy(
        content,
        length.offset,
      );
    return content;
  }

  /** A whole telegram, framing characters included, ready for the socket. */
  encodeFrame(t: WireTelegram): Buffer {
    const { start, end } = this.layout.framing;
    return Buffer.concat([start, this.encodeContent(t), end]);
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
        got = this.decodeField(f, raw(f));
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
      const value = this.decodeField(f, raw(f));
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

  private padded(parts: Buffer, length: number, t: WireTelegram): Buffer {
    if (parts.length > length) throw new TelegramError('telegram', t.type, `at most ${length} bytes (Framing.TelegramLength)`);
    const out = Buffer.alloc(length, this.layout.fill);
    parts.copy(out);
    return out;
  }
}
