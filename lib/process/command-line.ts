// The options of the project's commands (emulator, reference client, demo, bench): node's
// parseArgs, plus `--help`, and a one-line error with the usage instead of a stack trace for an
// unknown or malformed option.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { errorMessage } from './errors';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ options: O; strict: true }>>['values'];

/** The usage text: the synopsis, then each option with its default. */
function usageOf(synopsis: string, options: Options): string {
  const lines = Object.entries(options).map(([name, o]) => {
    const value = o.type === 'string' ? ' <value>' : '';
    const fallback = o.default !== undefined && o.default !== '' && o.default !== false ? `  (default ${String(o.default)})` : '';
    return `  --${name}${value}${fallback}`;
  });
  return `usage: ${synopsis}\noptions:\n${lines.join('\n')}\n  --help\n`;
}

/**
 * Parse a command's options (strict: unknown options and positionals are errors). `--help` prints
 * the usage to stdout and exits 0; a bad option prints `<command>: <why>` and the usage to stderr
 * and exits 2.
 */
export function commandLine<O extends Options>(
  command: string,
  synopsis: string,
  options: O,
  argv: string[] = process.argv.slice(2),
): Values<O> {
  const usage = usageOf(synopsis, options);
  let parsed: { values: Record<string, unknown> };
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean' } }, strict: true, allowPositionals: false });
  } catch (err) {
    process.stderr.write(`${command}: ${errorMessage(err)}\n${usage}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return parsed.values as Values<O>;
}

/** An option's value as a non-negative number; otherwise `<command>: --<name> must be ...` and exit 2. */
export function nonNegative(command: string, name: string, value: unknown): number {
  const v = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(v) || v < 0) {
    process.stderr.write(`${command}: --${name} must be a non-negative number, got ${JSON.stringify(value)} (--help lists the options)\n`);
    process.exit(2);
  }
  return v;
}
