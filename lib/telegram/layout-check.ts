// A layout file resolved into the table the codec uses (absolute offsets, fill bytes, maps both
// ways), and every problem the joi schema cannot see: overlaps, gaps, widths that do not add up,
// unknown types, fields mapped to no contract field, maps that do not reach the contract.
import { Contracts, type ContractField, type Direction, LogicalTypes, type LogicalType, requiredInbound } from './contract';
import type { FieldDef, FieldKind, HeaderRole, LayoutFile, TelegramDef } from './layout';

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

/** Which wire kinds can carry a contract field of each value kind. */
function carries(kind: FieldKind, c: ContractField, scaled: boolean): boolean {
  switch (c.kind) {
    case 'string':
      return kind === 'text';
    case 'integer':
      return (kind === 'int' || kind === 'bin') && !scaled;
    case 'number':
      return kind === 'int' || kind === 'decimal' || kind === 'bin';
    case 'enum':
      return kind === 'enum';
    case 'type':
      return (kind === 'text' || kind === 'int' || kind === 'bin') && !scaled;
  }
}

const ROLE_KINDS: Record<HeaderRole, FieldKind[]> = {
  Length: ['int', 'bin'],
  Sender: ['text'],
  Receiver: ['text'],
  Sequence: ['int', 'bin'],
  Type: ['text', 'int', 'bin'],
  Handshake: ['text', 'bin'],
  Code: ['int', 'bin', 'text'],
};

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

/**
 * Resolve a schema-valid layout file; `problems` lists everything wrong. `layout` is null if
 * anything is; `draft` is the table as far as it goes, for the commissioning tool to show.
 */
export function resolveLayout(file: LayoutFile): { layout: Layout | null; draft: Layout; problems: string[] } {
  const problems: string[] = [];
  const fill = fillByte(file.Fill);
  const start = framingBytes(file.Framing.Start);
  const end = framingBytes(file.Framing.End);

  const resolveField = (where: string, d: FieldDef, offset: number): Field => {
    const numeric = d.Kind === 'int' || d.Kind === 'decimal';
    const f: Field = {
      name: d.Name,
      kind: d.Kind,
      offset,
      width: d.Width,
      role: d.Role,
      maps: d.Maps,
      align: d.Align ?? (numeric ? 'right' : 'left'),
      fill: fillByte(d.Fill ?? (numeric ? '0' : file.Fill)),
      required: d.Required ?? false,
      scale: d.Scale ?? null,
      map: null,
      reverse: null,
      constant: null,
      counts: d.Counts ?? 'telegram',
      cut: false,
    };
    const at = `${where} field "${d.Name}"`;
    if (d.Kind === 'bin' && ![1, 2, 4].includes(d.Width)) problems.push(`${at}: a binary integer is 1, 2 or 4 bytes, not ${d.Width}`);
    if (d.Scale !== undefined && d.Kind !== 'decimal' && d.Kind !== 'bin') problems.push(`${at}: Scale applies to decimal and bin fields only`);
    if (d.Map && d.Kind !== 'enum' && d.Kind !== 'bin') problems.push(`${at}: Map applies to enum and bin fields only`);
    if (d.Kind === 'enum' && !d.Map) problems.push(`${at}: an enum needs a Map of wire values to contract values`);
    if ((d.Value !== undefined || d.Hex !== undefined) !== (d.Kind === 'fixed')) problems.push(`${at}: ${d.Kind === 'fixed' ? 'a fixed field needs a Value or a Hex' : 'Value and Hex apply to fixed fields only'}`);
    if (d.Kind === 'fixed') {
      f.constant = d.Hex !== undefined ? Buffer.from(d.Hex, 'hex') : Buffer.from(d.Value ?? '', 'latin1');
      if (f.constant.length !== d.Width) problems.push(`${at}: its constant has ${f.constant.length} bytes, its Width is ${d.Width}`);
    }
    if (d.Map) {
      f.map = new Map(Object.entries(d.Map));
      f.reverse = new Map();
      for (const [wire, value] of f.map) {
        const problem = wireValueProblem(f, wire, file.Charset);
        if (problem) problems.push(`${at}: Map key ${problem}`);
        if (!f.reverse.has(value)) f.reverse.set(value, wire);
      }
    }
    if (d.Counts !== undefined && d.Role !== 'Length') problems.push(`${at}: Counts applies to the Length field only`);
    return f;
  };

  /** Lays fields end to end from `from`, checking explicit offsets; problems name overlaps and gaps. */
  const place = (where: string, defs: FieldDef[], from: number): { fields: Field[]; end: number } => {
    let at = from;
    const fields: Field[] = [];
    const names = new Set<string>();
    for (const d of defs) {
      if (names.has(d.Name)) problems.push(`${where}: two fields are named "${d.Name}"`);
      names.add(d.Name);
      if (d.Offset !== undefined && d.Offset < at) problems.push(`${where} field "${d.Name}" at offset ${d.Offset} overlaps the field before it, which ends at ${at}`);
      if (d.Offset !== undefined && d.Offset > at) problems.push(`${where} field "${d.Name}" at offset ${d.Offset} leaves bytes ${at}-${d.Offset - 1} described by no field (add a spare field)`);
      const offset = d.Offset ?? at;
      fields.push(resolveField(where, d, offset));
      at = offset + d.Width;
    }
    return { fields, end: at };
  };

  // The header.
  const { fields: header, end: headerWidth } = place('Header', file.Header, 0);
  const roles: Partial<Record<HeaderRole, Field>> = {};
  for (const f of header) {
    if (!f.role) {
      if (f.kind !== 'fixed' && f.kind !== 'spare') problems.push(`Header field "${f.name}" has no Role: give it one (${Object.keys(ROLE_KINDS).join(', ')}) or make it fixed or spare`);
      continue;
    }
    if (roles[f.role]) problems.push(`Header: two fields have Role ${f.role} ("${roles[f.role]!.name}" and "${f.name}")`);
    roles[f.role] = f;
    if (!ROLE_KINDS[f.role].includes(f.kind)) problems.push(`Header field "${f.name}" (Role ${f.role}) is ${f.kind}; it must be ${ROLE_KINDS[f.role].join(' or ')}`);
  }
  if (!roles.Type) problems.push('Header: no field has Role Type, so a telegram\'s type cannot be told');
  const seqField = roles.Sequence;
  if (seqField) {
    if (file.Sequence.Last > capacity(seqField.kind, seqField.width)) problems.push(`Sequence.Last ${file.Sequence.Last} does not fit the ${seqField.width}-${seqField.kind === 'bin' ? 'byte' : 'digit'} Sequence field`);
    if (file.Sequence.Control > capacity(seqField.kind, seqField.width)) problems.push(`Sequence.Control ${file.Sequence.Control} does not fit the Sequence field`);
  } else if (file.Handshake.Window !== 1 && file.Handshake.Ack === 'each') {
    problems.push('Header: no field has Role Sequence, so acknowledgements cannot name what they answer: add one, or set Handshake.Window to 1 (one telegram at a time)');
  }
  if (file.Sequence.Control >= 1 && file.Sequence.Control <= file.Sequence.Last) problems.push(`Sequence.Control ${file.Sequence.Control} is inside the data numbers 1-${file.Sequence.Last}: use 0 or a number above Sequence.Last`);

  // Framing.
  const fixed = file.Framing.TelegramLength;
  if (end.length === 0 && fixed === null && !roles.Length) problems.push('Framing: nothing tells where a telegram ends: give an End character, a TelegramLength, or a header field with Role Length');
  if (start.length > 0 && end.length === 0 && fixed === null && !roles.Length) problems.push('Framing: a Start character alone does not end a telegram');
  if (roles.Length && roles.Length.counts === 'telegram' && roles.Length.offset > 0 && start.length === 0 && end.length === 0 && fixed === null) {
    problems.push('Framing: without start and end characters the Length field must be the first header field');
  }

  // Handshake.
  const hs = file.Handshake;
  let flags: Layout['handshake']['flags'] = null;
  if (hs.By === 'flag') {
    if (!roles.Handshake) problems.push('Handshake.By is flag, but no header field has Role Handshake');
    if (!hs.Flags) problems.push('Handshake.By is flag: give Handshake.Flags (the wire values of Data, Ack and Nak)');
    else {
      flags = { D: String(hs.Flags.Data), A: String(hs.Flags.Ack), N: String(hs.Flags.Nak) };
      if (new Set(Object.values(flags)).size !== 3) problems.push('Handshake.Flags: Data, Ack and Nak need three different values');
      if (roles.Handshake) {
        for (const [k, v] of Object.entries(hs.Flags)) {
          const problem = wireValueProblem(roles.Handshake, String(v), file.Charset);
          if (problem) problems.push(`Handshake.Flags.${k}: ${problem}`);
        }
      }
    }
  } else {
    if (roles.Handshake) problems.push(`Header field "${roles.Handshake.name}" has Role Handshake, but Handshake.By is type (acknowledgements are ACK and NAK telegrams)`);
    if (hs.Flags) problems.push('Handshake.Flags applies only when Handshake.By is flag');
    if (hs.Echo === 'telegram') problems.push('Handshake.Echo telegram needs Handshake.By flag (the answer is the telegram itself with its flag changed)');
  }
  const codes = Object.values(hs.NakCodes);
  if (new Set(codes).size !== codes.length) problems.push('Handshake.NakCodes: each reason needs its own code');

  // Telegram types.
  const telegrams = new Map<LogicalType, TelegramSpec>();
  const byCode = new Map<string, TelegramSpec>();
  const ackTypeFields: Array<[string, Field]> = [];
  file.Telegrams.forEach((t: TelegramDef, i) => {
    const where = `Telegrams[${i}] (${t.Type})`;
    if (!(LogicalTypes as readonly string[]).includes(t.Type)) {
      problems.push(`Telegrams[${i}]: Type "${t.Type}" is not a telegram type; one of ${LogicalTypes.join(', ')}`);
      return;
    }
    const type = t.Type as LogicalType;
    const contract = Contracts[type];
    if (telegrams.has(type)) problems.push(`${where}: ${type} is described twice`);
    if (t.Contract !== undefined && t.Contract !== contract.name) problems.push(`${where}: Contract "${t.Contract}" is not what ${type} carries (${contract.name})`);
    if (t.Direction !== contract.direction) problems.push(`${where}: Direction ${t.Direction}, but ${type} goes ${contract.direction}`);
    const code = t.Code === undefined ? '' : String(t.Code);
    if (t.Code === undefined && !(type === 'NAK' && hs.By === 'flag')) problems.push(`${where}: no Code (the value of the header's Type field for ${type})`);
    if (t.Code !== undefined && roles.Type) {
      const problem = wireValueProblem(roles.Type, code, file.Charset);
      if (problem) problems.push(`${where}: Code ${problem} (the header's Type field)`);
    }
    if (t.Code !== undefined && byCode.has(code)) problems.push(`${where}: Code "${code}" is already the code of ${byCode.get(code)!.type}`);
    const placed = place(`${type}`, t.Fields, headerWidth);
    const spec: TelegramSpec = { type, code, direction: t.Direction, contract: contract.name, fields: placed.fields, dataWidth: placed.end - headerWidth, constants: { ...(t.Constants ?? {}) } };
    const mapped = new Set<string>();
    for (const f of spec.fields) {
      const at = `${type} field "${f.name}"`;
      if (f.kind === 'fixed' || f.kind === 'spare') {
        if (f.maps !== undefined) problems.push(`${at} is ${f.kind} and carries nothing: remove Maps`);
        continue;
      }
      if (f.maps === undefined) {
        problems.push(`${at} maps to no contract field: give Maps (one of ${Object.keys(contract.fields).join(', ') || 'none: this type carries no data'}) or make it spare`);
        continue;
      }
      const c = contract.fields[f.maps];
      if (!c) {
        problems.push(`${at} maps "${f.maps}", which ${contract.name} does not have (${Object.keys(contract.fields).join(', ') || 'no fields'})`);
        continue;
      }
      if (mapped.has(f.maps)) problems.push(`${at}: ${contract.name}.${f.maps} is carried by two fields`);
      mapped.add(f.maps);
      const binEnum = f.kind === 'bin' && f.map !== null;
      if (!(binEnum ? c.kind === 'enum' : carries(f.kind, c, f.scale !== null && f.scale > 0))) problems.push(`${at} is ${f.kind}${f.scale ? ` with Scale ${f.scale}` : ''}, which cannot carry ${contract.name}.${f.maps} (${c.kind})`);
      if (c.kind === 'enum' && f.map) {
        for (const value of f.map.values()) {
          if (value === null ? !c.nullable : !c.values!.includes(value)) problems.push(`${at}: Map value ${JSON.stringify(value)} is not one of ${c.values!.join(', ')}${c.nullable ? ' or null' : ''}`);
        }
        if (contract.direction !== 'FromSorter' && type !== 'ACK' && type !== 'NAK') {
          const missing = c.values!.filter((v) => !f.reverse!.has(v));
          if (missing.length > 0) problems.push(`${at}: Map has no wire value for ${missing.join(', ')}, which the service sends`);
          if (c.nullable && (f.kind === 'bin' ? !f.reverse!.has(null) : f.required)) problems.push(`${at}: ${f.maps} may be null, which ${f.kind === 'bin' ? 'needs a Map entry with the value null' : 'is sent blank: Required must be false'}`);
        }
      }
      if (type === 'NAK' && f.maps === 'Text') f.cut = true;
      if (f.maps === 'AckType') ackTypeFields.push([at, f]);
    }
    for (const [key, value] of Object.entries(spec.constants)) {
      const c = contract.fields[key];
      if (!c) problems.push(`${where}: Constants.${key} is not a field of ${contract.name}`);
      else if (mapped.has(key)) problems.push(`${where}: Constants.${key} is also carried by a field`);
      else if (value === null ? !c.nullable : c.kind === 'enum' ? !c.values!.includes(String(value)) : (typeof value === 'number') !== (c.kind !== 'string') || (c.kind === 'integer' && !Number.isInteger(value))) {
        problems.push(`${where}: Constants.${key} ${JSON.stringify(value)} is not a ${c.kind}${c.values ? ` (${c.values.join(', ')})` : ''}`);
      }
    }
    const missing = requiredInbound(type).filter((k) => !mapped.has(k) && !(k in spec.constants));
    if (missing.length > 0) problems.push(`${where}: ${missing.map((k) => `${contract.name}.${k}`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} carried by no field and given no constant`);
    if (type === 'NAK' && !mapped.has('Code')) problems.push(`${where}: a NAK needs a field mapped to Code`);
    const length = headerWidth + spec.dataWidth;
    if (fixed !== null && length > fixed) problems.push(`${where}: header and fields need ${length} bytes, more than Framing.TelegramLength ${fixed}`);
    telegrams.set(type, spec);
    if (t.Code !== undefined) byCode.set(code, spec);
  });

  // What the handshake, the heartbeat and the resynchronisation need of the telegram set.
  const need = (type: LogicalType, why: string) => {
    if (!telegrams.has(type)) problems.push(`Telegrams: ${why}, but no ${type} telegram is described`);
  };
  need('REQU', 'the sorter asks for destinations');
  need('ASGN', 'the service sends assignments');
  if (file.Life) need('LIFE', 'Life is set');
  if (file.Resync === 'SYNS') {
    need('SYNS', 'Resync is SYNS');
    need('SYNE', 'Resync is SYNS');
  }
  if (hs.Ack === 'each' && hs.By === 'type') {
    need('ACK', 'Handshake.By is type');
    need('NAK', 'Handshake.By is type');
  }
  if (hs.By === 'flag' && telegrams.has('ACK')) problems.push('Telegrams: an ACK telegram is described, but Handshake.By is flag (an acknowledgement is the answered type with the Ack flag)');
  if (hs.Ack === 'each' && hs.By === 'flag' && !roles.Code && !telegrams.has('NAK')) problems.push('Handshake: a NAK\'s code has nowhere to go: describe a NAK telegram with a field mapped to Code, or give a header field with Role Code');
  if (hs.Echo === 'telegram' && telegrams.has('NAK')) problems.push('Handshake.Echo telegram: a NAK echoes the telegram it answers, so its code goes in a header field with Role Code, and no NAK telegram is described');
  if (roles.Code) {
    for (const [reason, code] of Object.entries(hs.NakCodes)) {
      const problem = wireValueProblem(roles.Code, String(code), file.Charset);
      if (problem) problems.push(`Handshake.NakCodes.${reason}: ${problem}`);
    }
  }

  for (const [at, f] of ackTypeFields) {
    for (const code of byCode.keys()) {
      const problem = wireValueProblem(f, code, file.Charset);
      if (problem) problems.push(`${at} (AckType) cannot hold the code of ${byCode.get(code)!.type}: ${problem}`);
    }
  }

  // Lengths: the longest telegram must fit the length field and the receivers' limit.
  const longest = Math.max(headerWidth, ...[...telegrams.values()].map((t) => headerWidth + t.dataWidth));
  const echoLongest = hs.Echo === 'telegram' ? longest : headerWidth;
  const biggest = fixed ?? Math.max(longest, echoLongest);
  let maxLength = file.Framing.MaxLength ?? fixed ?? (roles.Length ? capacity(roles.Length.kind, roles.Length.width) : biggest);
  if (roles.Length) {
    const counted = roles.Length.counts === 'telegram' ? biggest : biggest - roles.Length.offset - roles.Length.width;
    if (counted > capacity(roles.Length.kind, roles.Length.width)) problems.push(`Header field "${roles.Length.name}" (Role Length) cannot say ${counted}, the length of the longest telegram`);
  }
  if (biggest > maxLength) problems.push(`Framing.MaxLength ${maxLength} is shorter than the longest telegram (${biggest} bytes)`);
  maxLength = Math.min(maxLength, 65535);

  const binary = header.some((f) => f.kind === 'bin' || (f.constant !== null && !/^[\x20-\x7e]*$/.test(f.constant.toString('latin1')))) || [...telegrams.values()].some((t) => t.fields.some((f) => f.kind === 'bin' || f.fill < 0x20 || f.fill > 0x7e)) || fill < 0x20 || fill > 0x7e;
  const draft: Layout = {
    name: file.Name,
    description: file.Description ?? '',
    charset: file.Charset,
    fill,
    framing: { start, end, telegramLength: fixed, maxLength },
    header,
    headerWidth,
    roles,
    sequence: { last: file.Sequence.Last, control: file.Sequence.Control },
    handshake: { ack: hs.Ack, by: hs.By, flags, echo: hs.Echo, nakCodes: hs.NakCodes, resendMs: hs.ResendMs, window: hs.Window },
    life: file.Life ? { intervalMs: file.Life.IntervalMs } : null,
    resync: file.Resync === 'SYNS',
    telegrams,
    byCode,
    binary,
    file,
  };
  return { layout: problems.length > 0 ? null : draft, draft, problems };
}
