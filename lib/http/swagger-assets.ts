// Loads hapi-swagger without evaluating Swagger UI's browser bundle in Node (memory).
import Module from 'node:module';

/**
 * hapi-swagger only needs swagger-ui-dist's folder (it serves the UI's files from disk with
 * inert), but `require('swagger-ui-dist')` also evaluates the whole browser bundle in Node:
 * about 40 MB of resident memory for code that never runs here (measured: RSS 104 -> 64 MB
 * after loading hapi-swagger). Put the package's lightweight entry, the folder lookup alone,
 * in the module cache first. Import this module before hapi-swagger.
 */
const id = require.resolve('swagger-ui-dist');
if (!require.cache[id]) {
  // Loaded only when the package is not in the cache yet (an import would always load it).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string;
  const stub = new Module(id);
  stub.filename = id;
  stub.loaded = true;
  stub.exports = { getAbsoluteFSPath, absolutePath: getAbsoluteFSPath };
  require.cache[id] = stub;
}
