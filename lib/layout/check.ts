// A layout file resolved into the table the codec uses (table.ts), and every problem the
// joi schema cannot see: overlaps, gaps, widths that do not add up, unknown types, fields mapped
// to no contract field, maps that do not reach the contract. This file holds the rules of the
// whole telegram set (header, framing, handshake, lengths); fields.ts and
// telegrams.ts those of each field and each telegram type.
import type { LogicalType } from '../telegram/contract';
import type { FieldKind, HeaderRole, LayoutFile } from './schema';
import { placeFields } from './fields';
import { type Field, type Layout, type TelegramSpec, capacity, fillByte, framingBytes, wireValueProblem } from './table';
import { type TelegramSet, resolveTelegrams } from './telegrams';

type Roles = Layout['roles'];

const ROLE_KINDS: Record<HeaderRole, FieldKind[]> = {
  Length: ['int', 'bin'],
  Sender: ['text'],
  Receiver: ['text'],
  Sequence: ['int', 'bin'],
  Type: ['text', 'int', 'bin'],
  Handshake: ['text', 'bin'],
  Code: ['int', 'bin', 'text'],
};

/** The header's fields by role: each role once, held by a kind that can hold it, and a Type among them. */
function headerRoles(problems: string[], header: Field[]): Roles {
  const roles: Roles = {};
  for (const f of header) {
    if (!f.role) {
      if (f.kind !== 'fixed' && f.kind !== 'spare')
        problems.push(
          `Header field "${f.name}" has no Role: give it one (${Object.keys(ROLE_KINDS).join(', ')}) or make it fixed or spare`,
        );
      continue;
    }
    const earlier = roles[f.role];
    if (earlier) problems.push(`Header: two fields have Role ${f.role} ("${earlier.name}" and "${f.name}")`);
    roles[f.role] = f;
    if (!ROLE_KINDS[f.role].includes(f.kind))
      problems.push(`Header field "${f.name}" (Role ${f.role}) is ${f.kind}; it must be ${ROLE_KINDS[f.role].join(' or ')}`);
  }
  if (!roles.Type) problems.push("Header: no field has Role Type, so a telegram's type cannot be told");
  return roles;
}

/** The numbers fit the Sequence field (needed unless one telegram at a time), the control number outside the data numbers. */
function checkSequence(problems: string[], file: LayoutFile, roles: Roles): void {
  const seqField = roles.Sequence;
  if (seqField) {
    if (file.Sequence.Last > capacity(seqField.kind, seqField.width))
      problems.push(
        `Sequence.Last ${file.Sequence.Last} does not fit the ${seqField.width}-${seqField.kind === 'bin' ? 'byte' : 'digit'} Sequence field`,
      );
    if (file.Sequence.Control > capacity(seqField.kind, seqField.width))
      problems.push(`Sequence.Control ${file.Sequence.Control} does not fit the Sequence field`);
  } else if (file.Handshake.Window !== 1 && file.Handshake.Ack === 'each') {
    problems.push(
      'Header: no field has Role Sequence, so acknowledgements cannot name what they answer: add one, or set Handshake.Window to 1 (one telegram at a time)',
    );
  }
  if (file.Sequence.Control >= 1 && file.Sequence.Control <= file.Sequence.Last)
    problems.push(
      `Sequence.Control ${file.Sequence.Control} is inside the data numbers 1-${file.Sequence.Last}: use 0 or a number above Sequence.Last`,
    );
}

/** Something tells where a telegram ends: an end character, a fixed length, or a Length field the receiver can find. */
function checkFraming(problems: string[], file: LayoutFile, roles: Roles, start: Buffer, end: Buffer): void {
  const fixed = file.Framing.TelegramLength;
  if (end.length === 0 && fixed === null && !roles.Length)
    problems.push(
      'Framing: nothing tells where a telegram ends: give an End character, a TelegramLength, or a header field with Role Length',
    );
  if (start.length > 0 && end.length === 0 && fixed === null && !roles.Length)
    problems.push('Framing: a Start character alone does not end a telegram');
  if (
    roles.Length &&
    roles.Length.counts === 'telegram' &&
    roles.Length.offset > 0 &&
    start.length === 0 &&
    end.length === 0 &&
    fixed === null
  ) {
    problems.push('Framing: without start and end characters the Length field must be the first header field');
  }
}

/** The handshake's flags (By flag: three different values the Handshake field can hold; By type: none), and a code for each NAK reason. */
function handshakeFlags(problems: string[], file: LayoutFile, roles: Roles): Layout['handshake']['flags'] {
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
    if (roles.Handshake)
      problems.push(
        `Header field "${roles.Handshake.name}" has Role Handshake, but Handshake.By is type (acknowledgements are ACK and NAK telegrams)`,
      );
    if (hs.Flags) problems.push('Handshake.Flags applies only when Handshake.By is flag');
    if (hs.Echo === 'telegram')
      problems.push('Handshake.Echo telegram needs Handshake.By flag (the answer is the telegram itself with its flag changed)');
  }
  const codes = Object.values(hs.NakCodes);
  if (new Set(codes).size !== codes.length) problems.push('Handshake.NakCodes: each reason needs its own code');
  return flags;
}

/** What the handshake, the heartbeat and the resynchronisation need of the telegram set. */
function checkTelegramSet(problems: string[], file: LayoutFile, roles: Roles, telegrams: Map<LogicalType, TelegramSpec>): void {
  const hs = file.Handshake;
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
  if (hs.By === 'flag' && telegrams.has('ACK'))
    problems.push(
      'Telegrams: an ACK telegram is described, but Handshake.By is flag (an acknowledgement is the answered type with the Ack flag)',
    );
  if (hs.Ack === 'each' && hs.By === 'flag' && !roles.Code && !telegrams.has('NAK'))
    problems.push(
      "Handshake: a NAK's code has nowhere to go: describe a NAK telegram with a field mapped to Code, or give a header field with Role Code",
    );
  if (hs.Echo === 'telegram' && telegrams.has('NAK'))
    problems.push(
      'Handshake.Echo telegram: a NAK echoes the telegram it answers, so its code goes in a header field with Role Code, and no NAK telegram is described',
    );
  if (roles.Code) {
    for (const [reason, code] of Object.entries(hs.NakCodes)) {
      const problem = wireValueProblem(roles.Code, String(code), file.Charset);
      if (problem) problems.push(`Handshake.NakCodes.${reason}: ${problem}`);
    }
  }
}

/** A field that echoes the answered type can hold the code of every type. */
function checkAckTypes(problems: string[], file: LayoutFile, set: TelegramSet): void {
  for (const [at, f] of set.ackTypeFields) {
    for (const [code, spec] of set.byCode) {
      const problem = wireValueProblem(f, code, file.Charset);
      if (problem) problems.push(`${at} (AckType) cannot hold the code of ${spec.type}: ${problem}`);
    }
  }
}

/** The receivers' limit on a telegram's length; the longest telegram must fit it and the length field. */
function maxTelegramLength(
  problems: string[],
  file: LayoutFile,
  roles: Roles,
  headerWidth: number,
  telegrams: Map<LogicalType, TelegramSpec>,
): number {
  const fixed = file.Framing.TelegramLength;
  const longest = Math.max(headerWidth, ...[...telegrams.values()].map((t) => headerWidth + t.dataWidth));
  const echoLongest = file.Handshake.Echo === 'telegram' ? longest : headerWidth;
  const biggest = fixed ?? Math.max(longest, echoLongest);
  const maxLength = file.Framing.MaxLength ?? fixed ?? (roles.Length ? capacity(roles.Length.kind, roles.Length.width) : biggest);
  if (roles.Length) {
    const counted = roles.Length.counts === 'telegram' ? biggest : biggest - roles.Length.offset - roles.Length.width;
    if (counted > capacity(roles.Length.kind, roles.Length.width))
      problems.push(`Header field "${roles.Length.name}" (Role Length) cannot say ${counted}, the length of the longest telegram`);
  }
  if (biggest > maxLength) problems.push(`Framing.MaxLength ${maxLength} is shorter than the longest telegram (${biggest} bytes)`);
  return Math.min(maxLength, 65535);
}

/** Binary fields, a constant or a fill that is not printable: the traffic log writes such bytes in hex. */
function isBinary(fill: number, header: Field[], telegrams: Map<LogicalType, TelegramSpec>): boolean {
  const printable = (b: number) => b >= 0x20 && b <= 0x7e;
  if (header.some((f) => f.kind === 'bin' || (f.constant !== null && !/^[\x20-\x7e]*$/.test(f.constant.toString('latin1'))))) return true;
  return [...telegrams.values()].some((t) => t.fields.some((f) => f.kind === 'bin' || !printable(f.fill))) || !printable(fill);
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
  const { fields: header, end: headerWidth } = placeFields(problems, file, 'Header', file.Header, 0);
  const roles = headerRoles(problems, header);
  checkSequence(problems, file, roles);
  checkFraming(problems, file, roles, start, end);
  const flags = handshakeFlags(problems, file, roles);
  const set = resolveTelegrams({ file, roles, headerWidth, problems });
  const { telegrams, byCode } = set;
  checkTelegramSet(problems, file, roles, telegrams);
  checkAckTypes(problems, file, set);
  const maxLength = maxTelegramLength(problems, file, roles, headerWidth, telegrams);
  const hs = file.Handshake;
  const draft: Layout = {
    name: file.Name,
    description: file.Description ?? '',
    charset: file.Charset,
    fill,
    framing: { start, end, telegramLength: file.Framing.TelegramLength, maxLength },
    header,
    headerWidth,
    roles,
    sequence: { last: file.Sequence.Last, control: file.Sequence.Control },
    handshake: { ack: hs.Ack, by: hs.By, flags, echo: hs.Echo, nakCodes: hs.NakCodes, resendMs: hs.ResendMs, window: hs.Window },
    life: file.Life ? { intervalMs: file.Life.IntervalMs } : null,
    resync: file.Resync === 'SYNS',
    telegrams,
    byCode,
    binary: isBinary(fill, header, telegrams),
    file,
  };
  return { layout: problems.length > 0 ? null : draft, draft, problems };
}
