// Optional API keys: X-API-Key checked on every route except the documentation.
import crypto from 'node:crypto';
import Boom from '@hapi/boom';
import type { Request } from '@hapi/hapi';

/**
 * Paths that stay open without a key: the Swagger UI, the OpenAPI document and the dashboard's page
 * and files. None of them carries data; the page asks for the key to read /dashboard/data.
 */
const isOpen = (path: string) => path === '/' || path === '/swagger.json' || path === '/openapi.json' || path.startsWith('/swaggerui/') || path === '/dashboard' || path.startsWith('/dashboard/assets/');

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

/**
 * The onRequest check of `X-API-Key` (or `Authorization: Bearer <key>`) when ApiKeys is configured (off by default, as in the spec).
 * Keys are compared as SHA-256 digests in constant time. Throws 401 when the key is missing or wrong.
 */
export function apiKeyCheck(keys: string[]): (request: Request) => void {
  const digests = keys.map(digest);
  return (request) => {
    if (isOpen(request.path)) return;
    // Prometheus (and other tools) send a key as a bearer token.
    const authorization: unknown = request.headers.authorization;
    const bearer = typeof authorization === 'string' ? /^Bearer (.+)$/i.exec(authorization)?.[1] : undefined;
    const header = request.headers['x-api-key'];
    const given = typeof header === 'string' ? header : bearer;
    if (typeof given === 'string' && digests.some((d) => crypto.timingSafeEqual(d, digest(given)))) return;
    throw Boom.unauthorized(given ? 'wrong X-API-Key' : 'missing X-API-Key header');
  };
}
