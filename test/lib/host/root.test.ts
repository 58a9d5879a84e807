// Where the project lives (lib/host/root.ts): the folder of its package.json, never dist/.
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../lib/host/root';

it('is the folder of the project package.json, above this test', () => {
  expect(JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).name).toBe('sorter-integration-service');
  expect(path.relative(projectRoot, __filename)).toBe(path.join('test', 'lib', 'host', 'root.test.ts'));
  expect(path.basename(projectRoot)).not.toBe('dist');
});
