import { Global, Module } from '@nestjs/common';
import { STAFF_CREDENTIALS } from '../auth/staff-credentials';
import { PasswordHasher } from './password-hasher';
import { SignInLimiter } from './sign-in.limiter';
import { StaffAdminController } from './staff-admin.controller';
import { StaffAuthService } from './staff-auth.service';
import { StaffRepository } from './staff.repository';
import { StaffService } from './staff.service';
import { StaffSessionController } from './staff-session.controller';
import { StaffSessionService } from './staff-session.service';
import { StaffTokenController } from './staff-token.controller';

/**
 * Staff accounts, console sessions and personal API tokens (docs/decisions.md "Staff accounts").
 * Global for one provider: the AuthGuard (src/auth) asks STAFF_CREDENTIALS who a session or token
 * is, the port auth declares and this module implements, so auth never imports staff.
 */
@Global()
@Module({
  controllers: [StaffSessionController, StaffAdminController, StaffTokenController],
  providers: [
    StaffRepository,
    PasswordHasher,
    SignInLimiter,
    StaffAuthService,
    StaffSessionService,
    StaffService,
    { provide: STAFF_CREDENTIALS, useExisting: StaffAuthService },
  ],
  exports: [STAFF_CREDENTIALS],
})
export class StaffModule {}
