// Loading a layout file: its text read and parsed, checked against the joi schema (schema.ts),
// then resolved (check.ts), with every problem listed at once.
import fs from 'node:fs';
import { duplicateKeys } from '../process/json-keys';
import { type LayoutFile, layoutSchema } from './schema';
import { resolveLayout } from './check';
import type { Layout } from './table';
import { errorMessage } from '../process/errors';

/** Raised when a layout cannot be used; `message` lists every problem at once. */
export class LayoutError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is not a usable layout:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'LayoutError';
  }
}

/** Check a parsed layout file: the shape, then everything the shape cannot say. Never throws. */
export function checkLayout(raw: unknown): { layout: Layout | null; draft: Layout | null; problems: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { layout: null, draft: null, problems: ['the file must hold one JSON object'] };
  const { value, error } = layoutSchema.validate(raw);
  if (error) return { layout: null, draft: null, problems: error.details.map((d) => d.message) };
  return resolveLayout(value as LayoutFile);
}

/** Validate a parsed layout file; throws LayoutError listing every problem. */
function validateLayout(raw: unknown, file = 'layout'): Layout {
  const { layout, problems } = checkLayout(raw);
  if (!layout || problems.length > 0) throw new LayoutError(file, problems);
  return layout;
}

/** Parse a layout file's text (a byte-order mark and twice-given keys are handled as for config.json). */
export function parseLayoutText(text: string, file: string): unknown {
  const json = text.replace(/^\uFEFF/, '');
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new LayoutError(file, [`is not valid JSON: ${errorMessage(err)}`]);
  }
  const twice = duplicateKeys(json);
  if (twice.length > 0)
    throw new LayoutError(
      file,
      twice.map((d) => `"${d.path ? `${d.path}.` : ''}${d.key}" is given more than once: give it once`),
    );
  return raw;
}

/** Read and validate a layout file; throws LayoutError listing every problem. */
export function loadLayout(file: string): Layout {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new LayoutError(file, [`cannot be read: ${errorMessage(err)}`]);
  }
  return validateLayout(parseLayoutText(text, file), file);
}
