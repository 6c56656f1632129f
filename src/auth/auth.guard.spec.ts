import { Controller, ExecutionContext, Get, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AdminAuthLimiter } from '../common/throttle/admin-auth.limiter';
import type { LoginFailureLimiter } from '../common/throttle/login-failure.limiter';
import { loadConfig } from '../config/app-config';
import { AdminAuth, Permission } from './auth.decorators';
import { AuthGuard } from './auth.guard';
import type { CredentialService } from './credential.service';
import type { ServerSessionService } from './server-session.service';
import type { StaffCredentials } from './staff-credentials';

const TOKEN = 'unit-admin-token-0123456789';

@Controller('admin/example')
@AdminAuth()
class ExampleController {
  @Get('declared')
  @Permission('players.read')
  declared(): void {}

  @Get('undeclared')
  undeclared(): void {}
}

@Controller('admin/classwide')
@AdminAuth()
@Permission('staff.manage')
class ClassWideController {
  @Get()
  list(): void {}

  @Get('read')
  @Permission('overview.read')
  read(): void {}
}

function guardWith(staff: Partial<StaffCredentials> = {}): AuthGuard {
  const credentials = {
    adminApiEnabled: true,
    verifyAdminToken: (token: string) => token === TOKEN,
  } as unknown as CredentialService;
  const limiter = {
    assertOpen: () => Promise.resolve(),
    failed: () => Promise.resolve(),
    succeeded: () => Promise.resolve(),
  } as unknown as AdminAuthLimiter;
  const staffCredentials: StaffCredentials = {
    resolveSession: () => Promise.resolve(null),
    resolveToken: () => Promise.resolve(null),
    ...staff,
  };
  return new AuthGuard(
    new Reflector(),
    credentials,
    {} as ServerSessionService,
    {} as LoginFailureLimiter,
    limiter,
    staffCredentials,
    loadConfig({}),
  );
}

/** The handler `name` of a controller class, as Nest hands it to the guard. */
const handlerOf = (controller: { prototype: object }, name: string): unknown =>
  Object.getOwnPropertyDescriptor(controller.prototype, name)?.value;

function contextOf(controller: { prototype: object }, name: string, token: string): ExecutionContext {
  const handler = handlerOf(controller, name);
  const request = {
    headers: { authorization: `Bearer ${token}` },
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as Request;
  return {
    getType: () => 'http',
    getHandler: () => handler,
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

describe('AuthGuard: permissions of admin routes', () => {
  // The refusal of a route without a permission is logged as an error; not in the test's output.
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it('refuses a route that declares no permission to every caller, ADMIN_TOKEN included', async () => {
    const guard = guardWith();
    const context = contextOf(ExampleController, 'undeclared', TOKEN);
    await expect(Promise.resolve(guard.canActivate(context))).rejects.toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
      message: 'This route declares no permission, so nobody may call it',
    });
  });

  it('lets ADMIN_TOKEN (the owner) through a declared route', async () => {
    const guard = guardWith();
    const context = contextOf(ExampleController, 'declared', TOKEN);
    await expect(Promise.resolve(guard.canActivate(context))).resolves.toBe(true);
  });

  it("reads a controller's permission for its handlers, a handler's own first", async () => {
    const support = guardWith({
      resolveToken: () =>
        Promise.resolve({ accountId: 1, name: 'sam', role: 'support', credentialId: 'token:1', sessionId: null }),
    });
    await expect(Promise.resolve(support.canActivate(contextOf(ClassWideController, 'read', 'rst_x')))).resolves.toBe(
      true,
    );
    await expect(
      Promise.resolve(support.canActivate(contextOf(ClassWideController, 'list', 'rst_x'))),
    ).rejects.toMatchObject({ status: 403, message: 'The support role may not do this (staff.manage)' });
  });
});
