// One field of a layout as bytes and back, by its kind (text, int, decimal, enum, bin, fixed,
// spare): the part of the layout codec (codec.ts) that knows nothing of headers or telegram
// types. Values that do not fit are refused with a TelegramError naming the field, never cut (a
// NAK's text excepted: a diagnostic).
import { TelegramError } from '../telegram/telegram';
import { type Field, type Layout, charsetPattern, constantOf, mapOf, reverseOf } from './table';
import { readableBytes } from './text';

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
  const out = Buffer.alloc(f.width, f.fill);
  switch (f.kind) {
    case 'fixed':
      return Buffer.from(constantOf(f));
    case 'spare':
      return out;
    case 'bin': {
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
      out.writeUIntBE(n, 0, f.width);
      return out;
    }
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
      return aligned(f, s);
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
      if (r.forbidden && Buffer.from(s, 'latin1').includes(r.forbidden))
        throw new TelegramError(f.name, s, `no ${JSON.stringify(r.forbidden.toString('latin1'))} (it ends a telegram)`);
      const fillChar = String.fromCharCode(f.fill);
      if (s.length > 0 && (f.align === 'left' ? s.endsWith(fillChar) : s.startsWith(fillChar)))
        throw new TelegramError(f.name, s, `no ${f.align === 'left' ? 'trailing' : 'leading'} ${fillName(f.fill)}`);
      if (s.length > f.width) throw new TelegramError(f.name, String(value), `at most ${f.width} characters`);
      return aligned(f, s);
    }
  }
}

/** A field's value from its bytes; throws TelegramError naming the field. */
export function decodeField(r: FieldRules, f: Field, raw: Buffer): unknown {
  switch (f.kind) {
    case 'spare':
      return undefined;
    case 'fixed':
      if (!raw.equals(constantOf(f))) throw new TelegramError(f.name, shownBytes(r, raw), `the constant ${readableBytes(constantOf(f))}`);
      return undefined;
    case 'bin': {
      const n = raw.readUIntBE(0, f.width);
      if (f.map) {
        const v = f.map.get(String(n));
        if (v === undefined) throw new TelegramError(f.name, String(n), `one of ${[...f.map.keys()].join(', ')}`);
        return v;
      }
      return f.scale ? unscale(n, f.scale) : n;
    }
    case 'int':
    case 'decimal': {
      const s = unpadded(f, raw.toString('latin1'));
      if (f.kind === 'decimal' && f.scale === null) {
        if (!/^\d+(\.\d+)?$/.test(s))
          throw new TelegramError(f.name, raw.toString('latin1'), `a zero-padded decimal of ${f.width} characters`);
        return Number(s);
      }
      if (!/^\d+$/.test(s)) throw new TelegramError(f.name, raw.toString('latin1'), f.width === 1 ? 'a digit' : `${f.width} digits`);
      return f.scale ? unscale(Number(s), f.scale) : Number(s);
    }
    default: {
      const s = unpadded(f, raw.toString('latin1'));
      if (!r.text.test(s)) throw new TelegramError(f.name, shownBytes(r, raw), charsetName(r.charset));
      if (f.kind === 'enum') {
        const map = mapOf(f);
        const v = map.get(s);
        if (v !== undefined) return v;
        if (s === '' && !f.required) return null;
        throw new TelegramError(f.name, s, `one of ${[...map.keys()].join(', ')}`);
      }
      if (s === '' && f.required) throw new TelegramError(f.name, raw.toString('latin1'), 'a value');
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

function aligned(f: Field, s: string): Buffer {
  const pad = String.fromCharCode(f.fill).repeat(f.width - s.length);
  return Buffer.from(f.align === 'left' ? s + pad : pad + s, 'latin1');
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
