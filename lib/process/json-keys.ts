// Keys given twice in one JSON object, which JSON.parse settles silently by keeping the last.
/** A key that stands twice in the same object, with the path of that object ("" at the top). */
export interface DuplicateKey {
  path: string;
  key: string;
}

/**
 * The duplicated keys of a JSON text that parses (call it after JSON.parse succeeded): a scan
 * that follows strings and nesting, so that a key inside a string value is not counted.
 */
export function duplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  // One frame per open object or array: the keys seen (objects only) and its path.
  const stack: Array<{ keys: Set<string> | null; path: string; lastKey: string | null }> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      let k = j + 1;
      while (k < text.length && ' \t\r\n'.includes(text.charAt(k))) k++;
      const frame = stack[stack.length - 1];
      if (text[k] === ':' && frame?.keys) {
        const key = String(JSON.parse(text.slice(i, j + 1))); // a JSON string token
        if (frame.keys.has(key)) found.push({ path: frame.path, key });
        frame.keys.add(key);
        frame.lastKey = key;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      const parent = stack[stack.length - 1];
      const path = parent ? (parent.keys ? `${parent.path}${parent.path ? '.' : ''}${parent.lastKey}` : `${parent.path}[]`) : '';
      stack.push({ keys: c === '{' ? new Set() : null, path, lastKey: null });
    } else if (c === '}' || c === ']') {
      stack.pop();
    }
  }
  return found;
}
