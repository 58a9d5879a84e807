// Optional API keys with roles: X-API-Key checked on every route except the documentation and the
// dashboard's page; the route's role (manifest.json, `access`) checked once the route is known.
import crypto from 'node:crypto';
import Boom from '@hapi/boom';
import type { Request } from '@hapi/hapi';
import type { ApiRole, NamedApiKey } from '../process/config';

/**
 * Paths that stay open without a key: the Swagger UI, the OpenAPI document and the dashboard's page
 * and files. None of them carries data; the page asks for the key to read /dashboard/data.
 */
const isOpen = (path: string) =>
  path === '/' ||
  path === '/swagger.json' ||
  path === '/openapi.json' ||
  path.startsWith('/swaggerui/') ||
  path === '/dashboard' ||
  path.startsWith('/dashboard/assets/');

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

/** Who called: the key's name (never the key) and its role; 'all' for a plain key of the old list. */
export interface Caller {
  name: string;
  role: ApiRole | 'all';
}

/**
 * Whether a key of `role` may call a route that needs `access`. An operator may do what a monitor
 * may (the dashboard shows /status's figures, and whoever stands at the sorter wants /metrics and
 * the health checks too); a WCS key reaches the queues and the POSTs only; a plain key everything.
 */
export function permits(role: Caller['role'], access: ApiRole): boolean {
  if (role === 'all' || role === access) return true;
  return access === 'monitor' && role === 'operator';
}

/** The name an ApiKeys entry goes by: its Name, or for a plain key its place in the list. */
export const keyName = (entry: string | NamedApiKey, index: number) => (typeof entry === 'string' ? `ApiKeys[${index}]` : entry.Name);

/** The secret of an ApiKeys entry, and the role it grants ('all' for a plain key). */
export const keyOf = (entry: string | NamedApiKey): string => (typeof entry === 'string' ? entry : entry.Key);
export const roleOf = (entry: string | NamedApiKey): Caller['role'] => (typeof entry === 'string' ? 'all' : entry.Role);

/**
 * The onRequest check of `X-API-Key` (or `Authorization: Bearer <key>`) when ApiKeys is configured (off by default, as in the spec).
 * Keys are compared as SHA-256 digests in constant time. Returns the caller (null on an open path);
 * throws 401 when the key is missing or unknown.
 */
export function apiKeyCheck(keys: Array<string | NamedApiKey>): (request: Request) => Caller | null {
  const known = keys.map((entry, i) => ({
    digest: digest(keyOf(entry)),
    caller: { name: keyName(entry, i), role: roleOf(entry) } as Caller,
  }));
  return (request) => {
    if (isOpen(request.path)) return null;
    // Prometheus (and other tools) send a key as a bearer token.
    const authorization: unknown = request.headers.authorization;
    const bearer = typeof authorization === 'string' ? /^Bearer (.+)$/i.exec(authorization)?.[1] : undefined;
    const header = request.headers['x-api-key'];
    const given = typeof header === 'string' ? header : bearer;
    if (typeof given === 'string') {
      const d = digest(given);
      // Every key compared, whichever matches: the time says nothing of which one did.
      let found: Caller | null = null;
      for (const k of known) if (crypto.timingSafeEqual(k.digest, d)) found ??= k.caller;
      if (found) return found;
    }
    throw Boom.unauthorized(given ? 'wrong X-API-Key' : 'missing X-API-Key header');
  };
}

/** 403 unless `caller` may call a route that needs `access` (nothing to check without keys or without an access). */
export function checkRole(caller: Caller | null | undefined, access: ApiRole | undefined, path: string): void {
  if (!caller || !access || permits(caller.role, access)) return;
  const who = access === 'monitor' ? 'a monitor or operator key' : `a key with the ${access} role`;
  throw Boom.forbidden(`${path} needs ${who}; the key ${caller.name} has the ${caller.role} role`);
}

/** The caller a request's key named (set by the guards), or null without ApiKeys. */
export const callerOf = (request: Request): Caller | null => (request.app as { caller?: Caller | null }).caller ?? null;
