// The project's root and version (lib/process/paths.ts), as the logs and /status show them.
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot as dbRoot } from '../../../lib/host/root';
import { projectRoot, version } from '../../../lib/process/paths';

it("gives the project root and package.json's version", () => {
  expect(projectRoot).toBe(dbRoot);
  expect(version).toBe(JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version);
  expect(version).toMatch(/^\d+\.\d+\.\d+/);
});
