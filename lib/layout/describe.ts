// What the commissioning tool prints: a layout's telegram table, and a captured telegram decoded
// field by field.
import { TelegramError } from '../telegram/telegram';
import { Contracts } from '../telegram/contract';
import type { Field, Layout, TelegramSpec } from './table';
import type { LayoutCodec, WireTelegram } from './codec';
import { bytesOf, isHexDump, readableBytes } from './text';
import { errorMessage } from '../process/errors';

const pad = (s: string | number, n: number) => String(s).padEnd(n);
const lpad = (s: string | number, n: number) => String(s).padStart(n);
const visible = (b: Buffer) => (b.length === 0 ? 'none' : readableBytes(b));

function kindOf(f: Field): string {
  if (f.kind === 'bin') return `bin${f.width * 8}${f.scale ? ` /10^${f.scale}` : ''}`;
  if (f.kind === 'decimal') return f.scale === null ? 'decimal' : `decimal /10^${f.scale}`;
  return f.kind;
}

/** A fill character by name: space, NUL, or the character quoted. */
export function fillName(fill: number): string {
  return fill === 0x20
    ? 'space'
    : fill === 0
      ? 'NUL'
      : fill > 0x20 && fill < 0x7f
        ? JSON.stringify(String.fromCharCode(fill))
        : readableBytes(Buffer.of(fill));
}

function notesOf(f: Field, layoutFill: number): string {
  const notes: string[] = [];
  if (f.required) notes.push('required');
  if (f.map)
    notes.push(
      [...f.map].every(([wire, value]) => wire === value)
        ? `values ${[...f.map.keys()].join(' ')}`
        : [...f.map].map(([wire, value]) => `${wire}=${value ?? 'null'}`).join(' '),
    );
  if (f.constant) notes.push(`= ${readableBytes(f.constant)}`);
  const numeric = f.kind === 'int' || f.kind === 'decimal';
  if ((f.kind === 'text' || f.kind === 'enum' || numeric) && f.align !== (numeric ? 'right' : 'left')) notes.push(`${f.align}-aligned`);
  if ((f.kind === 'text' || f.kind === 'enum' || numeric) && f.fill !== (numeric ? 0x30 : layoutFill))
    notes.push(`fill ${fillName(f.fill)}`);
  if (f.role === 'Length') notes.push(`counts ${f.counts === 'telegram' ? 'the telegram' : 'the bytes after it'}`);
  return notes.join('; ');
}

function fieldRows(fields: Field[], carried: (f: Field) => string, layoutFill: number): string[] {
  return fields.map((f) =>
    `  ${lpad(f.offset, 6)} ${lpad(f.offset + 1, 5)} ${lpad(f.width, 6)}  ${pad(kindOf(f), 14)} ${pad(f.name, 20)} ${pad(carried(f), 22)} ${notesOf(f, layoutFill)}`.trimEnd(),
  );
}

const COLUMNS = `  ${lpad('offset', 6)} ${lpad('pos', 5)} ${lpad('width', 6)}  ${pad('kind', 14)} ${pad('field', 20)} ${pad('carries', 22)} notes`;

/** The telegram table of a layout: framing, header and every telegram type with offsets, widths and kinds. */
export function layoutTable(layout: Layout): string {
  const { framing, handshake: hs, roles } = layout;
  const lines: string[] = [`layout "${layout.name}"${layout.description ? `: ${layout.description}` : ''}`, ''];
  const framed = [
    framing.start.length > 0 && `start ${visible(framing.start)}`,
    framing.end.length > 0 && `end ${visible(framing.end)}`,
    framing.telegramLength !== null && `every telegram ${framing.telegramLength} bytes`,
    roles.Length && `length in "${roles.Length.name}"`,
  ].filter(Boolean);
  lines.push(`framing    ${framed.join(', ')}; at most ${framing.maxLength} bytes between the framing characters`);
  lines.push(
    `characters ${layout.charset === 'ascii' ? 'printable ASCII' : 'printable Latin-1'}, fill ${fillName(layout.fill)}${layout.binary ? '; binary fields: the traffic log writes them in hex' : ''}`,
  );
  lines.push(
    `sequence   ${roles.Sequence ? `"${roles.Sequence.name}" 1-${layout.sequence.last}, then 1; LIFE, SYNS and SYNE carry ${layout.sequence.control}` : 'none (one telegram at a time)'}`,
  );
  const flags = hs.flags
    ? ` in "${roles.Handshake?.name}" (data ${hs.flags.D}, ack ${hs.flags.A}, nak ${hs.flags.N})`
    : ' as ACK and NAK telegrams';
  const codes = Object.entries(hs.nakCodes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  lines.push(
    `handshake  ${hs.ack === 'none' ? 'none: data telegrams are not acknowledged' : `an acknowledgement per data telegram${flags}, echoing the ${hs.echo}${roles.Code ? `; NAK code in "${roles.Code.name}"` : ''}`}`,
  );
  lines.push(
    `           NAK codes: ${codes}; resend after ${hs.resendMs === null ? 'Sorter.AckTimeoutMs' : `${hs.resendMs} ms`}; window ${hs.window ?? 'Sorter.Window'}`,
  );
  lines.push(
    `life       ${layout.life ? `LIFE after ${layout.life.intervalMs === null ? 'Sorter.HeartbeatMs' : `${layout.life.intervalMs} ms`} without traffic; 3 intervals of silence: link dead` : 'none'}`,
  );
  lines.push(`resync     ${layout.resync ? 'SYNS, the unacknowledged telegrams again, SYNE at every connect' : 'none'}`);
  lines.push('', `HEADER (${layout.headerWidth} bytes)`, COLUMNS, ...fieldRows(layout.header, (f) => f.role ?? '', layout.fill));
  for (const t of layout.telegrams.values()) {
    const total = layout.headerWidth + t.dataWidth;
    const size =
      layout.framing.telegramLength !== null
        ? `${total} of ${layout.framing.telegramLength} bytes used`
        : `${t.dataWidth} bytes of data, ${total} in all`;
    lines.push(
      '',
      `${t.type}  code ${t.code === '' ? '(none: the answered type with the flag N)' : JSON.stringify(t.code)}  ${t.direction}  ${Contracts[t.type].name}  (${size})`,
    );
    if (t.fields.length > 0) lines.push(COLUMNS, ...fieldRows(t.fields, (f) => f.maps ?? '', layout.fill));
    const constants = Object.entries(t.constants);
    if (constants.length > 0) lines.push(`  constants: ${constants.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')}`);
  }
  return lines.join('\n');
}

/**
 * The bytes of a telegram as a person pastes it: a hex dump (as copied from a network capture),
 * or text with <hh> escapes (<STX>, <ETX> by name); `logged`: the telegram of a traffic log line,
 * as the log wrote it for this layout. Framing characters around it are taken off.
 */
export function telegramBytes(layout: Layout, input: string, logged = false): Buffer {
  let bytes: Buffer;
  if (logged) bytes = layout.binary ? bytesOf(input) : Buffer.from(input, 'latin1');
  else if (isHexDump(input)) bytes = Buffer.from(input.replace(/[\s:-]/g, ''), 'hex');
  else
    bytes = bytesOf(
      input.replace(
        /<(STX|ETX|EOT|NUL|CR|LF)>/g,
        (_, name: string) => `<${{ STX: '02', ETX: '03', EOT: '04', NUL: '00', CR: '0D', LF: '0A' }[name]}>`,
      ),
    );
  const { start, end } = layout.framing;
  if (start.length > 0 && bytes.subarray(0, start.length).equals(start)) bytes = bytes.subarray(start.length);
  if (end.length > 0 && bytes.length >= end.length && bytes.subarray(bytes.length - end.length).equals(end))
    bytes = bytes.subarray(0, bytes.length - end.length);
  return bytes;
}

/** A description being written: its lines, and the first problem found. */
class Description {
  readonly lines: string[] = [];
  problem: string | null = null;

  constructor(private readonly content: Buffer) {}

  /** The first problem is the one reported. */
  note(p: string): void {
    this.problem ??= p;
  }

  /** One field's line: its offset, width, bytes and value (`outcome` decodes it), or why it does not fit. */
  row(f: Field, outcome: () => unknown): void {
    const { content } = this;
    const raw = content.subarray(f.offset, f.offset + f.width);
    let shown: string;
    if (raw.length < f.width) {
      shown = `MISSING: the telegram ends at ${content.length}`;
      this.note(`${f.name}: the telegram ends at byte ${content.length}, the field needs bytes ${f.offset}-${f.offset + f.width - 1}`);
    } else {
      try {
        const value = outcome();
        shown = value === undefined ? '' : JSON.stringify(value);
      } catch (err) {
        const message = err instanceof TelegramError ? err.message : String(err);
        shown = `DOES NOT FIT: expected ${err instanceof TelegramError ? err.expected : message}`;
        this.note(message);
      }
    }
    const bytes = readableBytes(raw);
    this.lines.push(
      `  ${lpad(f.offset, 6)} ${lpad(f.width, 6)}  ${pad(f.name, 20)} ${pad(JSON.stringify(bytes.length > 40 ? `${bytes.slice(0, 37)}...` : bytes), 44)} ${shown}`,
    );
  }
}

/** The data part's lines: each field of the type it holds, and what follows the last one. */
function describeData(codec: LayoutCodec, content: Buffer, header: WireTelegram, spec: TelegramSpec, d: Description): void {
  const layout = codec.layout;
  d.lines.push(
    '',
    `${spec.type} data (${header.flag === 'D' ? 'data telegram' : header.flag === 'A' ? 'acknowledgement' : 'negative acknowledgement'})`,
  );
  for (const f of spec.fields) d.row(f, () => codec.decodeField(f, content.subarray(f.offset, f.offset + f.width)));
  const used = layout.headerWidth + spec.dataWidth;
  if (content.length <= used) return;
  const rest = content.subarray(used);
  const padding = rest.every((b) => b === layout.fill);
  if (layout.framing.telegramLength === null && !(header.flag !== 'D' && layout.handshake.echo === 'header'))
    d.note(`data: ${content.length - used} bytes after the last field of ${spec.type}`);
  d.lines.push(
    `  ${lpad(used, 6)} ${lpad(rest.length, 6)}  ${pad(padding ? '(padding)' : '(after the last field)', 20)} ${JSON.stringify(readableBytes(rest.subarray(0, 24)) + (rest.length > 24 ? '...' : ''))}`,
  );
}

/** A captured telegram decoded field by field; `problem` names the first field that does not fit. */
export function describeTelegram(codec: LayoutCodec, content: Buffer): { lines: string[]; problem: string | null } {
  const layout = codec.layout;
  const d = new Description(content);
  d.lines.push(`${content.length} bytes: ${readableBytes(content)}`, '');
  d.lines.push(`  ${lpad('offset', 6)} ${lpad('width', 6)}  ${pad('field', 20)} ${pad('bytes', 44)} value`);
  const valueOf = (f: Field) => codec.decodeField(f, content.subarray(f.offset, f.offset + f.width));
  for (const f of layout.header)
    d.row(f, () => (f.role === 'Length' ? lengthValue(codec, f, content) : f.role === 'Type' ? typeValue(layout, valueOf(f)) : valueOf(f)));
  let header: WireTelegram | null;
  try {
    header = codec.parseContent(content);
  } catch (err) {
    d.note(errorMessage(err));
    header = leniently(codec, content);
  }
  const spec = header ? dataSpec(layout, header) : null;
  if (header && spec) describeData(codec, content, header, spec, d);
  else if (header) d.lines.push('', `${header.type} ${header.flag === 'A' ? 'acknowledgement' : ''}: no data`);
  d.lines.push('', d.problem ? `first field that does not fit: ${d.problem}` : 'every field fits');
  return { lines: d.lines, problem: d.problem };
}

/** The header as far as it reads, for showing the data of a telegram whose header has a problem (null: its type does not read). */
function leniently(codec: LayoutCodec, content: Buffer): WireTelegram | null {
  const { roles, byCode, handshake, headerWidth } = codec.layout;
  const read = (f: Field | undefined) => {
    if (!f || content.length < f.offset + f.width) return undefined;
    try {
      return codec.decodeField(f, content.subarray(f.offset, f.offset + f.width));
    } catch {
      return undefined;
    }
  };
  const spec = byCode.get(String(read(roles.Type)));
  if (!spec) return null;
  const flagValue = String(read(roles.Handshake));
  const flag =
    handshake.by === 'type'
      ? spec.type === 'ACK'
        ? 'A'
        : spec.type === 'NAK'
          ? 'N'
          : 'D'
      : ((['D', 'A', 'N'] as const).find((k) => handshake.flags?.[k] === flagValue) ?? 'D');
  return { sender: '', receiver: '', seq: 0, type: spec.type, flag, code: null, data: content.subarray(headerWidth) };
}

/** The telegram type whose fields the data holds: a NAK's own, the echoed telegram's, or none for a bare acknowledgement. */
function dataSpec(layout: Layout, t: WireTelegram): TelegramSpec | null {
  if (t.flag === 'D' || layout.handshake.by === 'type') return layout.telegrams.get(t.type) ?? null;
  if (layout.handshake.echo === 'telegram') return layout.telegrams.get(t.type) ?? null;
  return t.flag === 'N' ? (layout.telegrams.get('NAK') ?? null) : null;
}

function typeValue(layout: Layout, code: unknown): string {
  const spec = layout.byCode.get(String(code));
  if (!spec) throw new TelegramError('Type', String(code), `one of ${[...layout.byCode.keys()].join(', ')}`);
  return String(code) === spec.type ? spec.type : `${String(code)} = ${spec.type}`;
}

function lengthValue(codec: LayoutCodec, f: Field, content: Buffer): unknown {
  const raw = content.subarray(f.offset, f.offset + f.width);
  const want = f.counts === 'telegram' ? content.length : content.length - f.offset - f.width;
  let value: unknown;
  try {
    value = codec.decodeField(f, raw);
  } catch {
    value = undefined;
  }
  if (value !== want)
    throw new TelegramError(
      f.name,
      codec.layout.binary ? readableBytes(raw) : raw.toString('latin1'),
      `${f.width} ${f.kind === 'bin' ? 'bytes' : 'digits'} equal to the telegram length ${want}`,
    );
  return value;
}
