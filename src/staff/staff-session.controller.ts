import { Body, Controller, Delete, Get, HttpCode, Post, Put, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Audited } from '../audit/audited.decorator';
import { AdminAuth, CurrentAdmin, Permission, SignInAuth } from '../auth/auth.decorators';
import type { AdminCaller } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { clientIp } from '../common/http/client-ip';
import { readCookie } from '../common/http/cookies';
import { requestIdOf } from '../common/http/request-id';
import { API_TAGS } from '../openapi/api-tags';
import { DEVICE_COOKIE } from './device-cookie';
import {
  ChangePasswordDto,
  ConfirmTotpDto,
  MeResponse,
  SignInDto,
  SignInResponse,
  TotpEnrolmentResponse,
  TotpPasswordDto,
} from './dto/staff.dto';
import { clearSessionCookies, setSessionCookies } from './session-cookies';
import { StaffService } from './staff.service';
import { StaffSessionService } from './staff-session.service';

const selfTarget = ({ accountId }: { accountId: number | null }) => `staff:${accountId ?? 'none'}`;

/** The console's sign-in and sign-out, and who the caller is. */
@ApiTags(API_TAGS.admin)
@Controller('admin')
export class StaffSessionController {
  constructor(
    private readonly sessions: StaffSessionService,
    private readonly staff: StaffService,
  ) {}

  @Post('session')
  @HttpCode(200)
  @SignInAuth()
  @ApiOperation({
    summary: 'Sign in to the console',
    description:
      'Name and password. Sets the HttpOnly session cookie (SameSite=Strict, Path=/admin) and the rhythmc_csrf cookie; every later call sends the session cookie and X-CSRF-Token. Failed sign-ins are limited per address and per account, and each is in the audit log.',
  })
  @ApiOkResponse({ type: SignInResponse })
  @ApiErrors({
    400: 'name or password is missing or not a string',
    401: {
      description:
        'Wrong name or password, or the account is disabled; for an account with a second factor, a missing or wrong code (the body then carries secondFactor: "totp")',
      message: 'Wrong name or password',
    },
    413: 'The body is over 256 KiB',
    429: {
      description:
        'Too many wrong passwords from this address, or for this account from browsers it has not signed in on before',
      retryAfter: 'Seconds until the lock-out ends',
    },
  })
  async signIn(
    @Body() body: SignInDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SignInResponse> {
    const signedIn = await this.sessions.signIn(body, {
      address: clientIp(request),
      deviceCookie: readCookie(request.headers, DEVICE_COOKIE),
      requestId: requestIdOf(response) ?? null,
    });
    setSessionCookies(request, response, signedIn);
    return signedIn.response;
  }

  @Delete('session')
  @HttpCode(204)
  @AdminAuth()
  @Permission('account.self')
  @ApiOperation({
    summary: 'Sign out',
    description:
      'Ends the console session on the service (its cookie authorizes nothing from then on) and clears the cookies.',
  })
  @ApiNoContentResponse({ description: 'The session has ended' })
  @ApiErrors({ 400: 'The caller is not a console session (a bearer token)' })
  @Audited('staff.sign-out', selfTarget, () => ({}))
  async signOut(
    @CurrentAdmin() caller: AdminCaller,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    await this.sessions.signOut(caller);
    clearSessionCookies(request, response);
  }

  @Get('me')
  @AdminAuth()
  @Permission('account.self')
  @ApiOperation({
    summary: 'Who the caller is',
    description:
      "The account (or ADMIN_TOKEN), its role and permissions, the session's end, and the service's time zone.",
  })
  @ApiOkResponse({ type: MeResponse })
  me(@CurrentAdmin() caller: AdminCaller): Promise<MeResponse> {
    return this.sessions.me(caller);
  }

  @Put('me/password')
  @HttpCode(204)
  @AdminAuth()
  @Permission('account.self')
  @ApiOperation({
    summary: 'Change your own password',
    description: 'From a console session only. Every other session of the account ends; this one stays.',
  })
  @ApiNoContentResponse({ description: 'Changed' })
  @ApiErrors({
    400: {
      description: 'currentPassword is wrong, or newPassword is too short or too long',
      message: 'currentPassword is wrong',
    },
    403: 'ADMIN_TOKEN or a personal API token: passwords are changed from a console session',
    413: 'The body is over 256 KiB',
    429: { description: 'Too many wrong passwords for this account', retryAfter: 'Seconds until the lock-out ends' },
  })
  @Audited('staff.password', selfTarget, () => ({}))
  changePassword(
    @CurrentAdmin() caller: AdminCaller,
    @Body() body: ChangePasswordDto,
    @Req() request: Request,
  ): Promise<void> {
    return this.staff.changeOwnPassword(caller, body, clientIp(request));
  }

  @Post('me/totp')
  @AdminAuth()
  @Permission('account.self')
  @ApiOperation({
    summary: 'Start turning on a second factor (TOTP)',
    description:
      'From a console session, with the current password. Answers a new secret and its otpauth:// URI, shown this once; sign-in asks for codes only after PUT /admin/me/totp confirms one.',
  })
  @ApiCreatedResponse({ type: TotpEnrolmentResponse })
  @ApiErrors({
    400: { description: 'password is missing or wrong', message: 'password is wrong' },
    403: 'ADMIN_TOKEN or a personal API token: a second factor is set up from a console session',
    409: {
      description: 'A second factor is already on',
      code: 'CONFLICT',
      message: 'A second factor is already on: turn it off first (DELETE /admin/me/totp)',
    },
    413: 'The body is over 256 KiB',
    429: { description: 'Too many wrong passwords for this account', retryAfter: 'Seconds until the lock-out ends' },
  })
  @Audited('staff.totp-start', selfTarget, () => ({}))
  startTotp(
    @CurrentAdmin() caller: AdminCaller,
    @Body() body: TotpPasswordDto,
    @Req() request: Request,
  ): Promise<TotpEnrolmentResponse> {
    return this.staff.startTotp(caller, body, clientIp(request));
  }

  @Put('me/totp')
  @HttpCode(204)
  @AdminAuth()
  @Permission('account.self')
  @ApiOperation({
    summary: 'Turn the second factor on',
    description: 'With a code the authenticator app shows for the secret of POST /admin/me/totp. Other sessions stay.',
  })
  @ApiNoContentResponse({ description: 'On: every later sign-in asks for a code' })
  @ApiErrors({
    400: {
      description: 'code is wrong, or no set-up was started',
      message: 'code is wrong: enter the code the app shows now',
    },
    403: 'ADMIN_TOKEN or a personal API token',
    409: {
      description: 'The set-up was started again meanwhile',
      code: 'CONFLICT',
      message: 'The set-up was started again meanwhile: use the newest secret',
    },
    413: 'The body is over 256 KiB',
  })
  @Audited('staff.totp-on', selfTarget, () => ({}))
  confirmTotp(@CurrentAdmin() caller: AdminCaller, @Body() body: ConfirmTotpDto): Promise<void> {
    return this.staff.confirmTotp(caller, body);
  }

  @Delete('me/totp')
  @HttpCode(204)
  @AdminAuth()
  @Permission('account.self')
  @ApiOperation({
    summary: 'Turn your second factor off',
    description:
      "From a console session, with the current password. An owner turns off someone else's with PATCH /admin/staff/{id}.",
  })
  @ApiNoContentResponse({ description: 'Off (or was not on)' })
  @ApiErrors({
    400: { description: 'password is missing or wrong', message: 'password is wrong' },
    403: 'ADMIN_TOKEN or a personal API token',
    413: 'The body is over 256 KiB',
    429: { description: 'Too many wrong passwords for this account', retryAfter: 'Seconds until the lock-out ends' },
  })
  @Audited('staff.totp-off', selfTarget, () => ({}))
  removeTotp(
    @CurrentAdmin() caller: AdminCaller,
    @Body() body: TotpPasswordDto,
    @Req() request: Request,
  ): Promise<void> {
    return this.staff.removeOwnTotp(caller, body, clientIp(request));
  }
}
