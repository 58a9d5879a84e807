// The telegram types of a layout file: each one's type, direction and code checked, its fields
// laid after the header, and what they carry checked against the contract of its type.
import { type Contract, type ContractField, Contracts, LogicalTypes, type LogicalType, requiredInbound } from '../telegram/contract';
import { type FieldKind, type LayoutFile, type TelegramDef, isLogicalType } from './schema';
import { placeFields } from './fields';
import { type Field, type Layout, type TelegramSpec, mapOf, reverseOf, wireValueProblem } from './table';

/** What checking a telegram type needs of the rest of the layout; its problems go to `problems`. */
export interface TelegramContext {
  file: LayoutFile;
  roles: Layout['roles'];
  headerWidth: number;
  problems: string[];
}

/** The telegram types by type and by code, and the fields that echo a type (checked once every code is known). */
export interface TelegramSet {
  telegrams: Map<LogicalType, TelegramSpec>;
  byCode: Map<string, TelegramSpec>;
  ackTypeFields: Array<[string, Field]>;
}

/** Resolves every telegram type the file describes; a type that is not one is left out. */
export function resolveTelegrams(ctx: TelegramContext): TelegramSet {
  const set: TelegramSet = { telegrams: new Map(), byCode: new Map(), ackTypeFields: [] };
  ctx.file.Telegrams.forEach((t, i) => resolveTelegram(ctx, set, t, i));
  return set;
}

/** One telegram type: checked and, if its Type is a telegram type, added to `set`. */
function resolveTelegram(ctx: TelegramContext, set: TelegramSet, t: TelegramDef, i: number): void {
  const { file, roles, headerWidth, problems } = ctx;
  const where = `Telegrams[${i}] (${t.Type})`;
  const type = t.Type;
  if (!isLogicalType(type)) {
    problems.push(`Telegrams[${i}]: Type "${t.Type}" is not a telegram type; one of ${LogicalTypes.join(', ')}`);
    return;
  }
  const contract = Contracts[type];
  if (set.telegrams.has(type)) problems.push(`${where}: ${type} is described twice`);
  if (t.Contract !== undefined && t.Contract !== contract.name)
    problems.push(`${where}: Contract "${t.Contract}" is not what ${type} carries (${contract.name})`);
  if (t.Direction !== contract.direction) problems.push(`${where}: Direction ${t.Direction}, but ${type} goes ${contract.direction}`);
  const code = t.Code === undefined ? '' : String(t.Code);
  if (t.Code === undefined && !(type === 'NAK' && file.Handshake.By === 'flag'))
    problems.push(`${where}: no Code (the value of the header's Type field for ${type})`);
  if (t.Code !== undefined && roles.Type) {
    const problem = wireValueProblem(roles.Type, code, file.Charset);
    if (problem) problems.push(`${where}: Code ${problem} (the header's Type field)`);
  }
  const earlier = set.byCode.get(code);
  if (t.Code !== undefined && earlier) problems.push(`${where}: Code "${code}" is already the code of ${earlier.type}`);
  const placed = placeFields(problems, file, `${type}`, t.Fields, headerWidth);
  const spec: TelegramSpec = {
    type,
    code,
    direction: t.Direction,
    contract: contract.name,
    fields: placed.fields,
    dataWidth: placed.end - headerWidth,
    constants: { ...(t.Constants ?? {}) },
  };
  const mapped = checkMappedFields(problems, spec, set.ackTypeFields);
  checkConstants(problems, where, contract, spec.constants, mapped);
  const missing = requiredInbound(type).filter((k) => !mapped.has(k) && !(k in spec.constants));
  if (missing.length > 0)
    problems.push(
      `${where}: ${missing.map((k) => `${contract.name}.${k}`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} carried by no field and given no constant`,
    );
  if (type === 'NAK' && !mapped.has('Code')) problems.push(`${where}: a NAK needs a field mapped to Code`);
  const length = headerWidth + spec.dataWidth;
  const fixed = file.Framing.TelegramLength;
  if (fixed !== null && length > fixed)
    problems.push(`${where}: header and fields need ${length} bytes, more than Framing.TelegramLength ${fixed}`);
  set.telegrams.set(type, spec);
  if (t.Code !== undefined) set.byCode.set(code, spec);
}

/**
 * Each data field of a telegram type against its contract: it maps one contract field, once, in a
 * wire kind that can carry it. Marks a NAK's text as cut; collects the fields that echo a type.
 * Returns the contract fields mapped.
 */
function checkMappedFields(problems: string[], spec: TelegramSpec, ackTypeFields: Array<[string, Field]>): Set<string> {
  const { type } = spec;
  const contract = Contracts[type];
  const mapped = new Set<string>();
  for (const f of spec.fields) {
    const at = `${type} field "${f.name}"`;
    if (f.kind === 'fixed' || f.kind === 'spare') {
      if (f.maps !== undefined) problems.push(`${at} is ${f.kind} and carries nothing: remove Maps`);
      continue;
    }
    if (f.maps === undefined) {
      problems.push(
        `${at} maps to no contract field: give Maps (one of ${Object.keys(contract.fields).join(', ') || 'none: this type carries no data'}) or make it spare`,
      );
      continue;
    }
    const c = contract.fields[f.maps];
    if (!c) {
      problems.push(
        `${at} maps "${f.maps}", which ${contract.name} does not have (${Object.keys(contract.fields).join(', ') || 'no fields'})`,
      );
      continue;
    }
    if (mapped.has(f.maps)) problems.push(`${at}: ${contract.name}.${f.maps} is carried by two fields`);
    mapped.add(f.maps);
    const binEnum = f.kind === 'bin' && f.map !== null;
    if (!(binEnum ? c.kind === 'enum' : carries(f.kind, c, f.scale !== null && f.scale > 0)))
      problems.push(
        `${at} is ${f.kind}${f.scale ? ` with Scale ${f.scale}` : ''}, which cannot carry ${contract.name}.${f.maps} (${c.kind})`,
      );
    if (c.kind === 'enum' && f.map) checkEnumMap(problems, at, type, c, f);
    if (type === 'NAK' && f.maps === 'Text') f.cut = true;
    if (f.maps === 'AckType') ackTypeFields.push([at, f]);
  }
  return mapped;
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

/** An enum's Map reaches only the contract's values; one the service sends has a wire value for each. */
function checkEnumMap(problems: string[], at: string, type: LogicalType, c: ContractField, f: Field): void {
  const values = c.values ?? []; // an enum's contract field lists its values (lib/telegram/contract.ts)
  for (const value of mapOf(f).values()) {
    if (value === null ? !c.nullable : !values.includes(value))
      problems.push(`${at}: Map value ${JSON.stringify(value)} is not one of ${values.join(', ')}${c.nullable ? ' or null' : ''}`);
  }
  if (Contracts[type].direction !== 'FromSorter' && type !== 'ACK' && type !== 'NAK') {
    const reverse = reverseOf(f);
    const missing = values.filter((v) => !reverse.has(v));
    if (missing.length > 0) problems.push(`${at}: Map has no wire value for ${missing.join(', ')}, which the service sends`);
    if (c.nullable && (f.kind === 'bin' ? !reverse.has(null) : f.required))
      problems.push(
        `${at}: ${f.maps} may be null, which ${f.kind === 'bin' ? 'needs a Map entry with the value null' : 'is sent blank: Required must be false'}`,
      );
  }
}

/** Constants name contract fields no wire field carries, with a value of the field's kind. */
function checkConstants(
  problems: string[],
  where: string,
  contract: Contract,
  constants: Record<string, unknown>,
  mapped: Set<string>,
): void {
  for (const [key, value] of Object.entries(constants)) {
    const c = contract.fields[key];
    if (!c) problems.push(`${where}: Constants.${key} is not a field of ${contract.name}`);
    else if (mapped.has(key)) problems.push(`${where}: Constants.${key} is also carried by a field`);
    else if (
      value === null
        ? !c.nullable
        : c.kind === 'enum'
          ? !(c.values ?? []).includes(String(value))
          : (typeof value === 'number') !== (c.kind !== 'string') || (c.kind === 'integer' && !Number.isInteger(value))
    ) {
      problems.push(`${where}: Constants.${key} ${JSON.stringify(value)} is not a ${c.kind}${c.values ? ` (${c.values.join(', ')})` : ''}`);
    }
  }
}
