// Where the project lives: the folder of its package.json, from the TypeScript sources or from
// the compiled dist/ alike.
import fs from 'node:fs';
import path from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && path.basename(dir) !== 'dist') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The project root, whether running from the TypeScript sources or from the compiled dist/. */
export const projectRoot = findRoot(__dirname);
