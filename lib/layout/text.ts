// Telegram bytes as a person reads them (traffic log, error messages, the commissioning tool),
// and back: printable ASCII as it is, every other byte as <hh>, a binary field as one <hhhh>.
import type { Field, Layout } from './table';

const PRINTABLE = (b: number) => b >= 0x20 && b <= 0x7e && b !== 0x3c; // '<' opens an escape

const hex = (bytes: Buffer) => bytes.toString('hex').toUpperCase();

/** Bytes as readable text: printable ASCII as it is, anything else (and '<') as <hh>, a run of four or more of the same as <hh*n>. */
export function readableBytes(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes.readUInt8(i);
    let n = 1;
    while (i + n < bytes.length && bytes[i + n] === b) n++;
    if (PRINTABLE(b)) {
      out += String.fromCharCode(b);
      n = 1;
    } else if (n >= 4) out += `<${hex(Buffer.of(b))}*${n}>`;
    else {
      out += `<${hex(Buffer.of(b))}>`;
      n = 1;
    }
    i += n;
  }
  return out;
}

/**
 * A telegram's content (between the framing characters) as the traffic log writes it. A layout
 * without binary fields is written as it is (protocol version 1's log is unchanged); otherwise
 * each binary field of the header and of the telegram's type is one <hex> group, and any other
 * byte outside printable ASCII is <hh>. `bytesOf` turns it back into the same bytes.
 */
export function readableTelegram(layout: Layout, content: Buffer, typeOf: (content: Buffer) => Field[] | null): string {
  if (!layout.binary) return content.toString('latin1');
  const fields = [...layout.header, ...(typeOf(content) ?? [])].filter((f) => f.kind === 'bin' && f.offset + f.width <= content.length);
  let out = '';
  let at = 0;
  for (const f of fields.sort((a, b) => a.offset - b.offset)) {
    if (f.offset < at) continue;
    out += readableBytes(content.subarray(at, f.offset)) + `<${hex(content.subarray(f.offset, f.offset + f.width))}>`;
    at = f.offset + f.width;
  }
  return out + readableBytes(content.subarray(at));
}

/** The bytes of readable text: <hex> groups (any even number of hex digits) become their bytes, <hh*n> n of that byte. */
export function bytesOf(readable: string): Buffer {
  const parts: Buffer[] = [];
  const re = /<((?:[0-9A-Fa-f]{2})+)(?:\*(\d{1,5}))?>/g;
  let at = 0;
  for (let m = re.exec(readable); m; m = re.exec(readable)) {
    const group = Buffer.from(m[1] ?? '', 'hex');
    parts.push(
      Buffer.from(readable.slice(at, m.index), 'latin1'),
      m[2] === undefined ? group : Buffer.alloc(group.length * Number(m[2]), group),
    );
    at = m.index + m[0].length;
  }
  parts.push(Buffer.from(readable.slice(at), 'latin1'));
  return Buffer.concat(parts);
}

/** Is this text a hex dump (pairs of hex digits, optionally separated by spaces, colons or dashes)? */
export function isHexDump(text: string): boolean {
  const compact = text.replace(/[\s:-]/g, '');
  return compact.length >= 2 && compact.length % 2 === 0 && /^[0-9A-Fa-f]+$/.test(compact) && /[\s:-]|^[0-9A-Fa-f]{8,}$/.test(text.trim());
}
