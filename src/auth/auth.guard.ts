import { CanActivate, ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { AUTH_KIND_KEY, PERMISSION_KEY } from './auth.decorators';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../common/errors/app-error';
import { clientIp } from '../common/http/client-ip';
import { readCookie } from '../common/http/cookies';
import { AdminAuthLimiter } from '../common/throttle/admin-auth.limiter';
import { LoginFailureLimiter } from '../common/throttle/login-failure.limiter';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { CredentialService } from './credential.service';
import { ServerSessionService } from './server-session.service';
import { ADMIN_TOKEN_ACTOR, ADMIN_TOKEN_CREDENTIAL_ID, type AdminCaller, type AuthKind } from './auth.types';
import { type Permission, roleAllows } from './permissions';
import {
  CSRF_HEADER,
  crossSiteProblem,
  csrfTokenOf,
  SESSION_COOKIE,
  STAFF_CREDENTIALS,
  STAFF_TOKEN_PREFIX,
  type StaffCredentials,
} from './staff-credentials';

/** What a route under @AdminAuth() needs: its permission, or null when it declares none (refused). */
interface AdminRoute {
  permission: Permission | null;
  /** `Controller.handler`, for the log line of a route without a permission. */
  name: string;
  /** The log line of a route without a permission is written once. */
  reported: boolean;
}

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
    @Inject(STAFF_CREDENTIALS) private readonly staff: StaffCredentials,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private readonly logger = new Logger('Auth');
  /** The auth kind of each route handler, read from its metadata once (routes do not change). */
  private readonly kinds = new WeakMap<object, AuthKind>();
  private readonly adminRoutes = new WeakMap<object, AdminRoute>();

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
        return this.authenticateAdmin(request, token, this.adminRouteOf(context));
      case 'sign-in': {
        if (!this.credentials.adminApiEnabled) throw new NotFoundError();
        const problem = crossSiteProblem(request, this.config.publicBaseUrl);
        if (problem !== null) throw new ForbiddenError(`Sign-in refused: ${problem}`);
        request.auth = { kind: 'sign-in' };
        return true;
      }
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

  private adminRouteOf(context: ExecutionContext): AdminRoute {
    const handler = context.getHandler();
    let route = this.adminRoutes.get(handler);
    if (route === undefined) {
      const permission =
        this.reflector.getAllAndOverride<Permission | undefined>(PERMISSION_KEY, [handler, context.getClass()]) ?? null;
      route = { permission, name: `${context.getClass().name}.${handler.name}`, reported: false };
      this.adminRoutes.set(handler, route);
    }
    return route;
  }

  /**
   * Who calls, then whether their role may: a bearer token (ADMIN_TOKEN or a personal API token;
   * wrong ones lock their source address out, AdminAuthLimiter), else the console session's
   * cookie, which counts only from the console's own origin and with its CSRF token.
   */
  private async authenticateAdmin(request: Request, token: string | null, route: AdminRoute): Promise<boolean> {
    const sessionSecret = token === null ? readCookie(request.headers, SESSION_COOKIE) : null;
    const caller =
      sessionSecret !== null
        ? await this.sessionCaller(request, sessionSecret)
        : await this.bearerCaller(request, token);
    request.auth = { kind: 'admin', caller };
    if (route.permission === null) {
      // Deny by default: a route that names no permission is nobody's (test/e2e/staff-roles.e2e-spec.ts).
      if (!route.reported) this.logger.error(`${route.name} declares no @Permission: refused to every caller`);
      route.reported = true;
      throw new ForbiddenError('This route declares no permission, so nobody may call it');
    }
    if (!roleAllows(caller.role, route.permission))
      throw new ForbiddenError(`The ${caller.role} role may not do this (${route.permission})`);
    return true;
  }

  private async bearerCaller(request: Request, token: string | null): Promise<AdminCaller> {
    const address = clientIp(request);
    await this.adminAuth.assertOpen('admin', address);
    let caller: AdminCaller | null = null;
    if (token !== null && this.credentials.verifyAdminToken(token)) {
      caller = {
        accountId: null,
        name: ADMIN_TOKEN_ACTOR,
        role: 'owner',
        credentialId: ADMIN_TOKEN_CREDENTIAL_ID,
        sessionId: null,
      };
    } else if (token !== null && token.startsWith(STAFF_TOKEN_PREFIX)) {
      caller = await this.staff.resolveToken(token);
    }
    if (caller === null) {
      // No token at all is no guess: only a presented wrong one counts.
      if (token !== null) await this.adminAuth.failed('admin', address);
      throw new UnauthorizedError('Invalid admin token');
    }
    await this.adminAuth.succeeded('admin', address);
    return caller;
  }

  /**
   * The session cookie authorizes nothing from another site: Sec-Fetch-Site and Origin, when the
   * browser sends them, must be this service's, and X-CSRF-Token must be the session's (a page of
   * another origin cannot read it). Checked before the session is looked up.
   */
  private async sessionCaller(request: Request, secret: string): Promise<AdminCaller> {
    const problem = crossSiteProblem(request, this.config.publicBaseUrl);
    if (problem !== null) throw new ForbiddenError(`Session cookie refused: ${problem}`);
    const presented = request.headers[CSRF_HEADER];
    if (typeof presented !== 'string' || !sameText(presented, csrfTokenOf(secret)))
      throw new ForbiddenError('Session cookie refused: the X-CSRF-Token header is missing or wrong');
    const caller = await this.staff.resolveSession(secret);
    if (caller === null) throw new UnauthorizedError('The session has ended; sign in again');
    return caller;
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

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function legacyServerAuthToken(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const value = (body as { serverAuthToken?: unknown }).serverAuthToken;
  return typeof value === 'string' && value.length > 0 ? value : null;
}
