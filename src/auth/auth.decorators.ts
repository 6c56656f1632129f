import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AdminCaller, AuthKind, ServerSessionContext } from './auth.types';
import { callerKey } from './caller-key';
import { Permission as PermissionName, PERMISSIONS } from './permissions';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { clientIp } from '../common/http/client-ip';
import {
  ADMIN_TOKEN_SCHEME,
  BOOTSTRAP_TOKEN_SCHEME,
  CSRF_TOKEN_SCHEME,
  SERVER_TOKEN_SCHEME,
  STAFF_SESSION_SCHEME,
} from '../openapi/security-schemes';

export const AUTH_KIND_KEY = 'rhythmc:auth-kind';
export const PERMISSION_KEY = 'rhythmc:permission';

/**
 * Every route needs a server access token unless it says otherwise (deny by default).
 * These decorators are the only opt-outs; each also documents its scheme in the OpenAPI
 * document (a route without one gets the server scheme there, as it does in the guard).
 */
export const Public = () =>
  // An empty requirement: no token (the OpenAPI builder writes it as `security: []`).
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'public' satisfies AuthKind), ApiSecurity({}));
/**
 * The admin API: ADMIN_TOKEN or a personal API token as a bearer token, or a console session
 * (cookie plus X-CSRF-Token). Every route under it also declares what it needs with
 * `@Permission(…)` on the handler or the controller; a route without one is refused to everyone.
 */
export const AdminAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND_KEY, 'admin' satisfies AuthKind),
    ApiBearerAuth(ADMIN_TOKEN_SCHEME),
    ApiSecurity({ [STAFF_SESSION_SCHEME]: [], [CSRF_TOKEN_SCHEME]: [] }),
    ApiErrors(
      {
        401: {
          description: 'No credential, a wrong token, or a session that has ended',
          code: 'UNAUTHORIZED',
          message: 'Invalid admin token',
        },
        403: {
          description:
            "The caller's role lacks the route's permission, or a session cookie came with a cross-site request or without its X-CSRF-Token",
          code: 'FORBIDDEN',
          message: 'The moderator role may not do this (servers.manage)',
        },
        429: {
          description: 'Too many wrong tokens from this address',
          code: 'RATE_LIMITED',
          retryAfter: 'Seconds until the lock-out of this address ends',
        },
        404: {
          description: 'The admin API is disabled (ADMIN_TOKEN is unset)',
          code: 'NOT_FOUND',
          message: 'Not found',
        },
      },
      { database: false },
    ),
  );
/**
 * The console's sign-in (POST /admin/session): no credential yet. 404 while the admin API is off,
 * 403 from another origin (a page elsewhere must not sign a browser in to an account of its choosing).
 */
export const SignInAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND_KEY, 'sign-in' satisfies AuthKind),
    ApiSecurity({}),
    ApiErrors(
      {
        403: {
          description: 'The request came from another origin (Origin or Sec-Fetch-Site)',
          code: 'FORBIDDEN',
          message: "Sign-in refused: the request's Origin is not this service",
        },
        404: {
          description: 'The admin API is disabled (ADMIN_TOKEN is unset)',
          code: 'NOT_FOUND',
          message: 'Not found',
        },
      },
      { database: false },
    ),
  );

/**
 * What an admin route needs (src/auth/permissions.ts); on a handler, or on a controller for all of
 * its handlers (a handler's own wins). The OpenAPI operation names it (`x-permission`).
 */
export const Permission = (permission: PermissionName) =>
  applyDecorators(
    SetMetadata(PERMISSION_KEY, permission),
    ApiExtension('x-permission', { name: permission, role: PERMISSIONS[permission].role }),
  );

/** The admin caller resolved by the guard (a staff account, or ADMIN_TOKEN). */
export const CurrentAdmin = createParamDecorator((_: unknown, ctx: ExecutionContext): AdminCaller => {
  const auth = ctx.switchToHttp().getRequest<Request>().auth;
  if (auth?.kind !== 'admin') throw new Error('CurrentAdmin used on a route without admin authentication');
  return auth.caller;
});

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

/** Who calls (callerKey: the game server, staff account, API key or anonymous address), for per-caller fairness. */
export const CallerKey = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const request = ctx.switchToHttp().getRequest<Request>();
  return callerKey(request.auth, () => clientIp(request));
});

/** The game server identified by the bootstrap token of POST /server/login, and that token's hash. */
export const BootstrapCredential = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): { serverId: number; credentialHash: string } => {
    const auth = ctx.switchToHttp().getRequest<Request>().auth;
    if (auth?.kind !== 'bootstrap')
      throw new Error('BootstrapCredential used on a route without bootstrap authentication');
    return { serverId: auth.serverId, credentialHash: auth.credentialHash };
  },
);
