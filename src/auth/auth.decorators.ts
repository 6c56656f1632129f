import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthKind, ServerSessionContext } from './auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { ADMIN_TOKEN_SCHEME, BOOTSTRAP_TOKEN_SCHEME, SERVER_TOKEN_SCHEME } from '../openapi/security-schemes';

export const AUTH_KIND_KEY = 'rhythmc:auth-kind';

/**
 * Every route needs a server access token unless it says otherwise (deny by default).
 * These decorators are the only opt-outs; each also documents its scheme in the OpenAPI
 * document (a route without one gets the server scheme there, as it does in the guard).
 */
export const Public = () =>
  // An empty requirement: no token (the OpenAPI builder writes it as `security: []`).
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'public' satisfies AuthKind), ApiSecurity({}));
export const AdminAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND_KEY, 'admin' satisfies AuthKind),
    ApiBearerAuth(ADMIN_TOKEN_SCHEME),
    ApiErrors(
      {
        401: { description: 'Missing or wrong admin token', code: 'UNAUTHORIZED', message: 'Invalid admin token' },
        404: {
          description: 'The admin API is disabled (ADMIN_TOKEN is unset)',
          code: 'NOT_FOUND',
          message: 'Not found',
        },
      },
      { database: false },
    ),
  );
export const BootstrapAuth = () =>
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'bootstrap' satisfies AuthKind), ApiBearerAuth(BOOTSTRAP_TOKEN_SCHEME));
/** A server access token that expired at most the refresh grace ago, while its session is live. */
export const ServerRefreshAuth = () =>
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'server-refresh' satisfies AuthKind), ApiBearerAuth(SERVER_TOKEN_SCHEME));

/** The server session resolved by the guard. */
export const CurrentServer = createParamDecorator((_: unknown, ctx: ExecutionContext): ServerSessionContext => {
  const auth = ctx.switchToHttp().getRequest<Request>().auth;
  if (auth?.kind !== 'server') throw new Error('CurrentServer used on a route without server authentication');
  return auth.session;
});

/** The game server identified by the bootstrap token of POST /server/login. */
export const BootstrapServerId = createParamDecorator((_: unknown, ctx: ExecutionContext): number => {
  const auth = ctx.switchToHttp().getRequest<Request>().auth;
  if (auth?.kind !== 'bootstrap') throw new Error('BootstrapServerId used on a route without bootstrap authentication');
  return auth.serverId;
});
