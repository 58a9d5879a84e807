// Preloaded by .ci/node-lines (NODE_OPTIONS=--require) into every Node process of a run on
// another Node line: jest, its workers, and the services and tools the tests start. It loads
// the native addons built for this Node's ABI from the cache instead of node_modules' own
// builds, which stay those of the primary Node (a run never touches them, so a primary run
// beside it keeps working), and notes which Node each process (and worker thread: NODE_OPTIONS
// applies to them too) runs on, for the script to check.
'use strict';
const fs = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const { abi, addons } = JSON.parse(process.env.NODE_LINES_ADDONS || '{"addons":{}}');
if (process.env.NODE_LINES_LOG) {
  const entry = { version: process.version, pid: process.pid, thread: !isMainThread, script: process.argv[1] ?? null };
  fs.appendFileSync(process.env.NODE_LINES_LOG, `${JSON.stringify(entry)}\n`);
}

// Node's require of a .node file calls process.dlopen (public API) when it loads one; a process
// on another ABI (a primary Node started by a test) keeps node_modules' build.
if (process.versions.modules === abi) {
  const dlopen = process.dlopen;
  process.dlopen = function dlopenForThisLine(module, filename, ...rest) {
    let real = filename;
    try {
      real = fs.realpathSync(filename);
    } catch {}
    const built = addons[real];
    if (built && built.error) throw new Error(`${real}: not built for Node ${process.version} (${built.error})`);
    return dlopen.call(this, module, built ? built.file : filename, ...rest);
  };
}
