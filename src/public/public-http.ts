import { Inject, Injectable } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { mapError } from '../common/errors/error-body';
import { ForbiddenError } from '../common/errors/app-error';
import { matchesIfNoneMatch, PreparedJson, prepareJson } from '../common/http/prepared-json';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SHARED_CACHE_LOCAL } from './api-key.guard';
import { PUBLIC_API_PREFIX } from './public-api.rules';

/** What a page of another origin may read of an answer besides the safelisted headers. */
const EXPOSED_HEADERS = [
  'ETag',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'X-Request-Id',
].join(', ');
/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Every request under /public (mounted before the router by mountPublicHttp, so 404s and errors
 * get it too):
 * - `Vary: Origin` on every answer, since the CORS fields depend on it: a shared cache never hands
 *   one origin's answer to another;
 * - `Cache-Control: no-store` until a route answers 200 (PublicResponder): a 401, 404 or 429 is never
 *   kept by a CDN and served to callers it was not about;
 * - CORS for the origins of PUBLIC_API_CORS_ORIGINS: `Access-Control-Allow-Origin` (never
 *   `-Credentials`: the API reads no cookie), the exposed rate-limit fields, and the preflight of a
 *   keyed call (OPTIONS with Origin and Access-Control-Request-Method) answered here with 204, or
 *   403 for another origin. An OPTIONS that is no preflight goes on to the router (404).
 */
@Injectable()
export class PublicHttpMiddleware {
  private readonly anyOrigin: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.anyOrigin = config.publicApiCorsOrigins.includes('*');
    this.origins = new Set(config.publicApiCorsOrigins);
  }

  use(request: Request, response: Response, next: NextFunction): void {
    // The first Vary of the answer (only X-Request-Id is set before): set, not merged by `vary`.
    if (response.getHeader('Vary') === undefined) response.setHeader('Vary', 'Origin');
    else response.vary('Origin');
    response.setHeader('Cache-Control', 'no-store');
    const origin = request.headers.origin;
    const allowed = origin !== undefined && (this.anyOrigin || this.origins.has(origin));
    if (allowed) {
      response.setHeader('Access-Control-Allow-Origin', this.anyOrigin ? '*' : origin);
      response.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    if (
      request.method === 'OPTIONS' &&
      origin !== undefined &&
      request.headers['access-control-request-method'] !== undefined
    ) {
      if (!allowed) {
        const mapped = mapError(
          new ForbiddenError('This origin may not read the public API (PUBLIC_API_CORS_ORIGINS)'),
        );
        response.status(mapped.status).json(mapped.body);
        return;
      }
      response.setHeader('Access-Control-Allow-Methods', 'GET, HEAD');
      response.setHeader('Access-Control-Allow-Headers', 'Authorization, If-None-Match');
      response.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      response.status(204).end();
      return;
    }
    next();
  }
}

/**
 * Mounts PublicHttpMiddleware on `/public` as an Express middleware (a Nest middleware for a path
 * would register a route of every method there, which the router and the route tables would show).
 */
export function mountPublicHttp(app: NestExpressApplication): void {
  const middleware = app.get(PublicHttpMiddleware);
  app.use(`/${PUBLIC_API_PREFIX.split('/')[0]}`, (request: Request, response: Response, next: NextFunction) =>
    middleware.use(request, response, next),
  );
}

/**
 * Sends a public answer: JSON with a strong ETag over its bytes, `304` without a body when
 * If-None-Match names it, and `Cache-Control: max-age=PUBLIC_API_MAX_AGE_SECONDS`: `public` for
 * the anonymous tier (anyone may have the answer, so a CDN may keep it), `private` for a keyed
 * call (a shared cache must not hand a keyed answer to callers without the key).
 */
@Injectable()
export class PublicResponder {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  send(request: Request, response: Response, answer: unknown): void {
    const prepared = answer instanceof PreparedAnswer ? answer.prepared : prepareJson(answer);
    const shared = response.locals[SHARED_CACHE_LOCAL] === true;
    response.setHeader(
      'Cache-Control',
      `${shared ? 'public' : 'private'}, max-age=${this.config.publicApiMaxAgeSeconds}`,
    );
    response.setHeader('ETag', prepared.etag);
    if (matchesIfNoneMatch(request.headers['if-none-match'], prepared.etag)) {
      response.status(304).end();
      return;
    }
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.status(200).end(prepared.body);
  }
}

/** An answer serialised already (the catalog's cached chart list): sent as it is. */
export class PreparedAnswer {
  constructor(readonly prepared: PreparedJson) {}
}
