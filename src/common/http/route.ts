import type { Request } from 'express';

/** The route label of requests no route matched (unknown paths, bodies refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The Nest route pattern that served the request (`/admin/players/:uid/ban`), never the raw path:
 * labels and log fields stay bounded, and path parameters do not multiply metric series.
 * Express keeps `req.route` once a route matched, so this is read when the response ends.
 */
export function routeOf(request: Request): string {
  const path: unknown = (request.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : UNMATCHED_ROUTE;
}

const MAX_LOGGED_PATH = 256;

/** The request path without its query string (signed links carry their signature there), capped. */
export function pathOf(request: Request): string {
  const url = request.originalUrl;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}
