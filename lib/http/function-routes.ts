// The HTTP trigger: one route per HTTP event of manifest.json, running its function with the
// service's deps, and 405 with Allow for any other method on those paths.
import Boom from '@hapi/boom';
import type Hapi from '@hapi/hapi';
import type { Deps } from '../deps';
import { loadHttpFunction } from '../functions/define';
import { type Manifest, httpTriggers } from '../functions/manifest';
import { callerOf } from './auth';
import type { KeyLists } from './guards';
import { schemaKeys } from './input-keys';
import { clientAddress, goneWatch, reply } from './reply';
import { routeOptions } from './routes';

/** Route each HTTP trigger of `manifest` to its function. */
export function routeFunctions(server: Hapi.Server, manifest: Manifest, deps: Deps): void {
  const ids = new Map<string, number>();
  for (const { name, fn, method, path, access } of httpTriggers(manifest)) {
    // A function may have several HTTP events; hapi's route ids must be unique: name, name-2, ...
    const n = (ids.get(name) ?? 0) + 1;
    ids.set(name, n);
    const id = n === 1 ? name : `${name}-${n}`;
    const f = loadHttpFunction(fn.handler);
    const app: KeyLists = { query: schemaKeys(f.binding.query), payload: schemaKeys(f.binding.payload), access };
    const input = fn.input ?? {};
    server.route({
      method,
      path,
      options: {
        ...routeOptions(f.binding, input, fn.description, path, { app, id }),
        handler: async (request, h) => {
          const view = {
            method: request.method,
            params: request.params,
            query: request.query,
            headers: request.headers,
            payload: request.payload,
            clientAddress: clientAddress(request),
            gone: goneWatch(request),
            caller: callerOf(request)?.name ?? null,
          };
          return reply(request, h, await f.invoke(deps, view, input), deps);
        },
      },
    });
  }
  refuseOtherMethods(server, manifest);
}

/** Any other method on a path we serve: 405 with Allow (what HTTP clients expect), not 404. */
function refuseOtherMethods(server: Hapi.Server, manifest: Manifest): void {
  const methodsByPath = new Map<string, string[]>();
  for (const { method, path } of httpTriggers(manifest))
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), ...(method === 'GET' ? ['GET', 'HEAD'] : [method])]);
  for (const [path, methods] of methodsByPath) {
    server.route({
      method: '*',
      path,
      options: {
        handler: (request, h) => {
          const err = Boom.methodNotAllowed(
            `${request.method.toUpperCase()} is not allowed on ${request.path}; allowed: ${methods.join(', ')}`,
            undefined,
            methods,
          );
          return h.response(err.output.payload).code(405).header('Allow', methods.join(', '));
        },
      },
    });
  }
}
