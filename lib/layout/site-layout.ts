// Sorter.Layout: which layout file the link speaks, found in the service home or among the
// shipped ones, and checked against the rest of the sorter's settings.
import fs from 'node:fs';
import path from 'node:path';
import type { SorterSettings } from '../process/config';
import { LayoutError, loadLayout } from './load';
import { FieldWidth } from '../telegram/fields';
import { type Layout, charsetPattern } from './table';
import { LAYOUTS_DIR, TelegramWire } from './wire';

/** The file Sorter.Layout names: absolute, else in the service home, else in layouts/ (".json" may be left off). */
export function layoutFile(home: string, name: string): string {
  const names = path.extname(name) === '' ? [name, `${name}.json`] : [name];
  const candidates = path.isAbsolute(name)
    ? names
    : [...names.map((n) => path.resolve(home, n)), ...names.map((n) => path.join(LAYOUTS_DIR, n))];
  const found = candidates.find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
  if (!found) throw new LayoutError(`Sorter.Layout "${name}"`, [`names no layout file: looked for ${candidates.join(', ')}`]);
  return found;
}

/**
 * The layout of Sorter.Layout, validated, and fitting the other sorter settings (our names in its
 * header fields, a window below its repeat distance); throws LayoutError listing every problem.
 */
export function sorterLayout(home: string, s: Pick<SorterSettings, 'Layout' | 'Name' | 'PeerName' | 'Window'>): Layout {
  const file = layoutFile(home, s.Layout);
  const layout = loadLayout(file);
  const problems: string[] = [];
  for (const [key, role] of [
    ['Name', 'Sender'],
    ['PeerName', 'Receiver'],
  ] as const) {
    const f = layout.roles[role];
    if (f && (s[key].length > f.width || !charsetPattern(layout.charset).test(s[key])))
      problems.push(`Sorter.${key} "${s[key]}" does not fit the layout's ${f.width}-character ${role} field "${f.name}"`);
  }
  const repeatWindow = new TelegramWire(layout).repeatWindow;
  if (s.Window >= repeatWindow)
    problems.push(
      `Sorter.Window ${s.Window} must be below ${repeatWindow}, half the layout's sequence numbers (1-${layout.sequence.last})`,
    );
  if (problems.length > 0) throw new LayoutError(`${file} (Sorter.Layout)`, problems);
  return layout;
}

/**
 * The fields of the layout's assignment and destination settings telegrams that take less than
 * the HTTP contract lets a WCS send (a text narrower than its width in docs/http-api.md, a
 * number for a text): one line each, logged at start-up. Such values are answered 400 naming the
 * field (TelegramWire.encodeOutbound), never written and then dropped.
 */
export function narrowerThanContract(layout: Layout): string[] {
  const lines: string[] = [];
  for (const type of ['ASGN', 'DSET'] as const) {
    for (const f of layout.telegrams.get(type)?.fields ?? []) {
      const widths: Readonly<Record<string, number>> = FieldWidth;
      const contract = f.maps === undefined ? undefined : widths[f.maps];
      if (contract === undefined) continue;
      if (f.kind === 'text' && f.width >= contract) continue;
      const takes = f.kind === 'text' ? `${f.width} characters` : `a ${f.kind} field of ${f.width} bytes`;
      lines.push(
        `layout ${layout.name}: ${type} carries "${f.maps}" in ${f.name}, ${takes}, where the HTTP contract allows ${contract} characters: a POST with a value that does not fit is answered 400`,
      );
    }
  }
  return lines;
}
