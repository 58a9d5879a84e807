// Where the project lives, from the sources or from dist/, and its version.
import fs from 'node:fs';
import path from 'node:path';

/** The project root, whether running from the TypeScript sources or from the compiled dist/. */
export const projectRoot = path.resolve(__dirname, __dirname.split(path.sep).includes('dist') ? '../..' : '..');

/** The service version from package.json. */
export const version: string = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version;
