import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AUTH_KIND_KEY } from './auth.decorators';
import { NotFoundError, UnauthorizedError } from '../common/errors/app-error';
import { clientIp } from '../common/http/client-ip';
import { AdminAuthLimiter } from '../common/throttle/admin-auth.limiter';
import { LoginFailureLimiter } from '../common/throttle/login-failure.limiter';
import { CredentialService } from './credential.service';
import { ServerSessionService } from './server-session.service';
import { ADMIN_TOKEN_CREDENTIAL_ID, type AuthKind } from './auth.types';

/** `Authorization: Bearer <token>` (scheme case-insensitive); null when absent or malformed. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * Global, deny-by-default: a route without an auth decorator needs a live server access token.
 * The resolved identity is put on `request.auth` for the @Current… decorators.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly credentials: CredentialService,
    private readonly serverSessions: ServerSessionService,
    private readonly loginFailures: LoginFailureLimiter,
    private readonly adminAuth: AdminAuthLimiter,
  ) {}

  /** The auth kind of each route handler, read from its metadata once (routes do not change). */
  private readonly kinds = new WeakMap<object, AuthKind>();

  /** Synchronous for public routes: Nest awaits a guard only when it returns a promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<Request>();
    const kind = this.kindOf(context);
    if (kind === 'public') {
      request.auth = { kind: 'public' };
      return true;
    }
    // The public API's key (or its anonymous tier) is checked by the guard its decorator attaches,
    // which runs next: the keys, scopes and limits are the public module's.
    if (kind === 'api-key') return true;
    const token = bearerToken(request.headers.authorization);
    switch (kind) {
      case 'admin':
        // Without ADMIN_TOKEN the admin API does not exist (decisions.md §1).
        if (!this.credentials.adminApiEnabled) throw new NotFoundError();
        return this.authenticateAdmin(request, token);
      case 'bootstrap':
        return this.authenticateBootstrap(request, token);
      case 'server':
      case 'server-refresh':
        if (token === null) throw new UnauthorizedError('Missing bearer server access token');
        return this.authenticateServer(request, token, kind === 'server-refresh');
    }
  }

  private kindOf(context: ExecutionContext): AuthKind {
    const handler = context.getHandler();
    let kind = this.kinds.get(handler);
    if (kind === undefined) {
      kind =
        this.reflector.getAllAndOverride<AuthKind | undefined>(AUTH_KIND_KEY, [handler, context.getClass()]) ??
        'server';
      this.kinds.set(handler, kind);
    }
    return kind;
  }

  /** Wrong admin tokens lock their source address out of the admin API (AdminAuthLimiter). */
  private async authenticateAdmin(request: Request, token: string | null): Promise<boolean> {
    const address = clientIp(request);
    await this.adminAuth.assertOpen('admin', address);
    if (token === null || !this.credentials.verifyAdminToken(token)) {
      // No token at all is no guess: only a presented wrong one counts.
      if (token !== null) await this.adminAuth.failed('admin', address);
      throw new UnauthorizedError('Invalid admin token');
    }
    await this.adminAuth.succeeded('admin', address);
    request.auth = { kind: 'admin', credentialId: ADMIN_TOKEN_CREDENTIAL_ID };
    return true;
  }

  private async authenticateBootstrap(request: Request, token: string | null): Promise<boolean> {
    // The legacy body field is read only when the header is absent (decisions.md §3).
    const presented = token ?? legacyServerAuthToken(request.body);
    const credentialHash = presented === null ? null : this.credentials.credentialHash(presented);
    try {
      if (credentialHash === null) throw new UnauthorizedError('Missing bootstrap token');
      request.auth = {
        kind: 'bootstrap',
        serverId: await this.credentials.resolveBootstrapToken(credentialHash),
        credentialHash,
      };
    } catch (error) {
      // A failure counts against the source address and the credential: over either budget, 429.
      if (error instanceof UnauthorizedError)
        throw await this.loginFailures.serverLoginFailed(clientIp(request), credentialHash, error);
      throw error;
    }
    return true;
  }

  private async authenticateServer(request: Request, token: string, forRefresh: boolean): Promise<boolean> {
    request.auth = { kind: 'server', session: await this.serverSessions.resolveServerToken(token, forRefresh) };
    return true;
  }
}

function legacyServerAuthToken(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const value = (body as { serverAuthToken?: unknown }).serverAuthToken;
  return typeof value === 'string' && value.length > 0 ? value : null;
}
