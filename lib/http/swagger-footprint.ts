// Loads hapi-swagger without evaluating, in Node, what it brings along and the service does not
// run at start-up (memory). Import this module before hapi-swagger.
import type Handlebars from 'handlebars';
import { deferModule, loadSubstituted, substituteModule } from '../internals/node';

/**
 * hapi-swagger only needs swagger-ui-dist's folder (it serves the UI's files from disk with
 * inert), but `require('swagger-ui-dist')` also evaluates the whole browser bundle in Node:
 * about 40 MB of resident memory for code that never runs here (measured: RSS 104 -> 64 MB
 * after loading hapi-swagger). Put the package's lightweight entry, the folder lookup alone,
 * in the module cache first.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file of the package, loaded as it is
const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string;
substituteModule('swagger-ui-dist', { getAbsoluteFSPath, absolutePath: getAbsoluteFSPath });

/**
 * hapi-swagger validates its document with swagger-parser (z-schema, validator, js-yaml) only
 * with its `debug` option, and dereferences it with json-schema-ref-parser only with
 * `deReference`: the service sets neither. Evaluated if ever used, not at start.
 */
deferModule('swagger-parser');
deferModule('@apidevtools/json-schema-ref-parser');

/**
 * The documentation page's template engine: handlebars and its compiler (with source-map), 0.7
 * MB of source, for one page. The view manager needs `compile` and `registerHelper` at start;
 * this stand-in keeps the helpers and loads handlebars at the first page view.
 */
type CompileOptions = Parameters<typeof Handlebars.compile>[1];
const helpers: Array<[string, Handlebars.HelperDelegate]> = [];
let engine: typeof Handlebars | undefined;
function handlebars(): typeof Handlebars {
  if (engine) return engine;
  const loaded = loadSubstituted('handlebars') as typeof Handlebars;
  for (const [name, helper] of helpers) loaded.registerHelper(name, helper);
  return (engine = loaded);
}
substituteModule('handlebars', {
  compile: (input: string, options?: CompileOptions) => handlebars().compile(input, options),
  registerHelper: (name: string, helper: Handlebars.HelperDelegate) => {
    if (engine) engine.registerHelper(name, helper);
    else helpers.push([name, helper]);
  },
});
