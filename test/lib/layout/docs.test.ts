// docs/telegram-layouts.md's worked example is a layout that passes the check, and its decoded
// capture says what the page says: the docs cannot drift from the code.
import fs from 'node:fs';
import path from 'node:path';
import { checkLayout } from '../../../lib/layout/load';
import { LayoutCodec } from '../../../lib/layout/codec';
import { describeTelegram, layoutTable, telegramBytes } from '../../../lib/layout/describe';

const page = fs.readFileSync(path.join(__dirname, '../../../docs/telegram-layouts.md'), 'utf8');
const example = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(page)?.[1] ?? 'null');

describe('the worked example of docs/telegram-layouts.md', () => {
  it('is a layout without problems whose table is the one the page prints', () => {
    const { layout, problems } = checkLayout(example);
    expect(problems).toEqual([]);
    const rows = layoutTable(layout!).split('\n');
    const start = rows.indexOf(rows.find((r) => r.startsWith('REQU  code "DREQ"'))!);
    expect(page).toContain(rows.slice(start, start + 8).join('\n'));
  });

  it("refuses the page's positions taken as offsets, as the page shows", () => {
    const shifted = JSON.parse(JSON.stringify(example));
    for (const t of shifted.Telegrams) for (const f of t.Fields) f.Offset += 1;
    for (const problem of checkLayout(shifted).problems) expect(page).toContain(`  - ${problem}`);
  });

  it('decodes the captured telegram as the page shows, naming LOOPS', () => {
    const hex = /decode acme-cb8.json '([0-9a-f ]+)'/.exec(page)?.[1] ?? '';
    const codec = new LayoutCodec(checkLayout(example).layout!);
    const { lines, problem } = describeTelegram(codec, telegramBytes(codec.layout, hex));
    expect(problem).toBe('LOOPS: got "X", expected a digit');
    for (const line of lines) expect(page).toContain(line.trimEnd());
  });
});
