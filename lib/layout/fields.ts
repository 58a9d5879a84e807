// A layout's fields resolved from the file: laid end to end with explicit offsets checked for
// overlaps and gaps, and each field's description checked against what its kind allows.
import type { FieldDef, LayoutFile } from './schema';
import { type Field, fillByte, wireValueProblem } from './table';

/** One field at `offset`, written as its kind and the layout's fill say; its problems go to `problems`. */
function resolveField(problems: string[], file: LayoutFile, where: string, d: FieldDef, offset: number): Field {
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
  if (d.Scale !== undefined && d.Kind !== 'decimal' && d.Kind !== 'bin')
    problems.push(`${at}: Scale applies to decimal and bin fields only`);
  if (d.Map && d.Kind !== 'enum' && d.Kind !== 'bin') problems.push(`${at}: Map applies to enum and bin fields only`);
  if (d.Kind === 'enum' && !d.Map) problems.push(`${at}: an enum needs a Map of wire values to contract values`);
  if ((d.Value !== undefined || d.Hex !== undefined) !== (d.Kind === 'fixed'))
    problems.push(`${at}: ${d.Kind === 'fixed' ? 'a fixed field needs a Value or a Hex' : 'Value and Hex apply to fixed fields only'}`);
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
}

/** Lays fields end to end from `from`, checking explicit offsets; problems name overlaps and gaps. */
export function placeFields(
  problems: string[],
  file: LayoutFile,
  where: string,
  defs: FieldDef[],
  from: number,
): { fields: Field[]; end: number } {
  let at = from;
  const fields: Field[] = [];
  const names = new Set<string>();
  for (const d of defs) {
    if (names.has(d.Name)) problems.push(`${where}: two fields are named "${d.Name}"`);
    names.add(d.Name);
    if (d.Offset !== undefined && d.Offset < at)
      problems.push(`${where} field "${d.Name}" at offset ${d.Offset} overlaps the field before it, which ends at ${at}`);
    if (d.Offset !== undefined && d.Offset > at)
      problems.push(
        `${where} field "${d.Name}" at offset ${d.Offset} leaves bytes ${at}-${d.Offset - 1} described by no field (add a spare field)`,
      );
    const offset = d.Offset ?? at;
    fields.push(resolveField(problems, file, where, d, offset));
    at = offset + d.Width;
  }
  return { fields, end: at };
}
