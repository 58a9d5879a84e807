// `npm run layout -- check FILE` and `npm run layout -- decode FILE TELEGRAM`: the commissioning
// tool for a sorter's layout file (docs/telegram-layouts.md).
import fs from 'node:fs';
import { LayoutError, checkLayout, parseLayoutText } from '../layout/load';
import { LayoutCodec } from '../layout/codec';
import { describeTelegram, layoutTable, telegramBytes } from '../layout/describe';
import { parseTrafficLine } from '../link/traffic-log';
import { errorMessage } from '../process/errors';

const USAGE = `usage: npm run layout -- check FILE
       npm run layout -- decode FILE TELEGRAM
  check   prints the telegram table (offsets, widths, kinds) and every problem; exit 78 if there are any
  decode  decodes one telegram field by field, naming the first field that does not fit (exit 1);
          TELEGRAM is a hex dump as copied from a network capture ("02 30 31 ..."), a line of
          Service_PLC.log, or text (<STX>, <ETX> and <hh> for other bytes); "-" reads it from stdin
`;

/** The layout file parsed and checked; problems are printed and mean exit 78. */
function open(file: string) {
  let raw: unknown;
  try {
    raw = parseLayoutText(fs.readFileSync(file, 'utf8'), file);
  } catch (err) {
    const problems = err instanceof LayoutError ? err.problems : [`cannot be read: ${errorMessage(err)}`];
    return { draft: null, layout: null, problems };
  }
  return checkLayout(raw);
}

function printProblems(file: string, problems: string[]): void {
  process.stdout.write(
    `\n${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
  );
}

function main(argv: string[]): number {
  const [command, file, ...rest] = argv;
  if (
    !file ||
    (command !== 'check' && command !== 'decode') ||
    (command === 'decode' && rest.length === 0) ||
    (command === 'check' && rest.length > 0)
  ) {
    process.stderr.write(USAGE);
    return 2;
  }
  const { draft, layout, problems } = open(file);
  if (command === 'check') {
    if (draft) process.stdout.write(`${file}: ${layoutTable(draft)}\n`);
    if (problems.length > 0) {
      printProblems(file, problems);
      return 78;
    }
    process.stdout.write(`\n${file}: no problems\n`);
    return 0;
  }
  if (!layout) {
    printProblems(file, problems);
    return 78;
  }
  const input = rest.join(' ') === '-' ? fs.readFileSync(0, 'latin1').replace(/\r?\n$/, '') : rest.join(' ');
  const logged = parseTrafficLine(input.trim());
  const content = telegramBytes(layout, logged ? logged.content : input, logged !== undefined);
  const { lines, problem } = describeTelegram(new LayoutCodec(layout), content);
  process.stdout.write(`${lines.join('\n')}\n`);
  return problem ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
