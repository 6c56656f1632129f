import { applyDecorators, Injectable, PipeTransform, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { AUTH_KIND_KEY } from '../auth/auth.decorators';
import type { AuthKind } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { BadRequestError } from '../common/errors/app-error';
import { PUBLIC_API_KEY_SCHEME } from '../openapi/security-schemes';
import { ApiKeyGuard, PUBLIC_SCOPE_KEY } from './api-key.guard';
import type { PublicApiScope } from './public-api.rules';

const integer = { type: 'integer' };

/** The current-limit fields of every answer past the key check (draft-ietf-httpapi-ratelimit-headers-06). */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Calls allowed in the window', schema: integer },
  'RateLimit-Remaining': { description: 'Calls left in the window', schema: integer },
  'RateLimit-Reset': { description: 'Seconds until the window (or, after a 429, the wait) ends', schema: integer },
  'RateLimit-Policy': { description: 'The quota policy: `<limit>;w=60`', schema: { type: 'string' } },
};

/** What a 200 of the public API carries besides its body. */
export const PUBLIC_OK_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  ETag: {
    description: 'Strong validator of the body: send it back in If-None-Match for a 304',
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description:
      '`private, max-age=N` for a keyed call, `public, max-age=N` for the anonymous tier (PUBLIC_API_MAX_AGE_SECONDS)',
    schema: { type: 'string' },
  },
};

/**
 * A route of the public API that needs `scope`: the AuthGuard leaves it to ApiKeyGuard (a live key
 * with the scope, or the anonymous tier), which counts the call against its budget. Documents the
 * key scheme and the answers every public route shares.
 */
export const PublicApiAuth = (scope: PublicApiScope) =>
  applyDecorators(
    SetMetadata(AUTH_KIND_KEY, 'api-key' satisfies AuthKind),
    SetMetadata(PUBLIC_SCOPE_KEY, scope),
    UseGuards(ApiKeyGuard),
    ApiBearerAuth(PUBLIC_API_KEY_SCHEME),
    ApiResponse({
      status: 304,
      description: 'If-None-Match names the current ETag: no body',
      headers: RATE_LIMIT_HEADERS,
    }),
    ApiErrors(
      {
        401: {
          description: 'No key (while the anonymous tier is off), or a key that is not a live key',
          message: 'Invalid or revoked API key',
        },
        403: {
          description: `The key does not have the scope ${scope}`,
          message: `This API key does not have the scope ${scope}`,
        },
        429: {
          description:
            "RATE_LIMITED: the key's (or the address's, anonymous) calls of the minute are used up; or the address presented too many invalid keys",
          headers: RATE_LIMIT_HEADERS,
        },
      },
      { database: false },
    ),
  );

/** A `{uuid}` path parameter: a Mojang uuid with or without its dashes, any case; lowercase with dashes for the lookup. */
@Injectable()
export class ParseUuidPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const match = /^([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})$/.exec(
      value,
    );
    if (!match || (value.includes('-') && value.length !== 36))
      throw BadRequestError.field('uuid', 'must be a uuid (32 hexadecimal digits, with or without dashes)');
    return match.slice(1).join('-').toLowerCase();
  }
}
