// Where the project lives, and its version.
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../host/root';

export { projectRoot };

/** The service version from package.json. */
export const version: string = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version;
