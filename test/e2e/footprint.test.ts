// Memory and start-up footprint of the real service process.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const dist = path.resolve(__dirname, '../../dist');

describe('memory footprint of the compiled service', () => {
  it('loading the HTTP server does not evaluate the Swagger UI browser bundle (lib/http/swagger-assets.ts)', () => {
    const script = `
      require(${JSON.stringify(path.join(dist, 'lib/http/server.js'))});
      const loaded = Object.keys(require.cache).filter((f) => f.includes('swagger-ui-dist'));
      const ui = require('swagger-ui-dist');
      console.log(JSON.stringify({ loaded, keys: Object.keys(ui).sort(), folder: ui.getAbsoluteFSPath() }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.resolve(dist, '..'), encoding: 'utf8' }));
    expect(out.loaded.some((f: string) => f.endsWith('swagger-ui-bundle.js'))).toBe(false);
    expect(out.keys).toEqual(['absolutePath', 'getAbsoluteFSPath']);
    expect(out.folder).toMatch(/swagger-ui-dist$/);
  });
});
