import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthKind, ServerSessionContext } from '../../auth/auth.types';

export const AUTH_KIND_KEY = 'rhythmc:auth-kind';

/**
 * Every route needs a server access token unless it says otherwise (deny by default).
 * These decorators are the only opt-outs.
 */
export const Public = () => SetMetadata(AUTH_KIND_KEY, 'public' satisfies AuthKind);
export const AdminAuth = () => SetMetadata(AUTH_KIND_KEY, 'admin' satisfies AuthKind);
export const BootstrapAuth = () => SetMetadata(AUTH_KIND_KEY, 'bootstrap' satisfies AuthKind);
/** A server access token that expired at most the refresh grace ago, while its session is live. */
export const ServerRefreshAuth = () => SetMetadata(AUTH_KIND_KEY, 'server-refresh' satisfies AuthKind);

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
