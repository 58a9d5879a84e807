// Loads hapi-swagger without evaluating Swagger UI's browser bundle in Node (memory).
import { substituteModule } from '../internals/node';

/**
 * hapi-swagger only needs swagger-ui-dist's folder (it serves the UI's files from disk with
 * inert), but `require('swagger-ui-dist')` also evaluates the whole browser bundle in Node:
 * about 40 MB of resident memory for code that never runs here (measured: RSS 104 -> 64 MB
 * after loading hapi-swagger). Put the package's lightweight entry, the folder lookup alone,
 * in the module cache first. Import this module before hapi-swagger.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file of the package, loaded as it is
const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string;
substituteModule('swagger-ui-dist', { getAbsoluteFSPath, absolutePath: getAbsoluteFSPath });
