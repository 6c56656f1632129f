import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { buildMessage, IsBoolean, IsIn, IsString, Matches, MinLength, ValidateBy } from 'class-validator';
import { RESERVED_STAFF_NAMES, STAFF_NAME_PATTERN } from '../../auth/auth.types';
import { PERMISSION_NAMES, ROLES } from '../../auth/permissions';
import type { Permission, Role } from '../../auth/permissions';
import { AbsentOr } from '../../common/validation/absent-or';
import { IsText, textLength } from '../../common/validation/is-text';

/** NIST SP 800-63B-4 §3.1.1.2: at least 15 characters for a password that is the only factor. */
export const PASSWORD_MIN_LENGTH = 15;
/** A bound on what is hashed (scrypt reads all of it) and sent. */
export const PASSWORD_MAX_LENGTH = 256;

/** A new password: 15 to 256 characters (code points), any characters, no composition rule. */
function IsNewPassword(): PropertyDecorator {
  return ValidateBy({
    name: 'isNewPassword',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' &&
        textLength(value) >= PASSWORD_MIN_LENGTH &&
        textLength(value) <= PASSWORD_MAX_LENGTH,
      defaultMessage: buildMessage(
        (prefix) =>
          `${prefix}$property must be a string of ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
      ),
    },
  });
}

const NAME_MESSAGE = 'name must be 2-32 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit';
const ROLE_MESSAGE = `role must be one of ${ROLES.join(', ')}`;

export class SignInDto {
  @ApiProperty({
    type: String,
    maxLength: 64,
    description: 'The account name (case does not matter)',
    example: 'alice',
  })
  @IsString()
  @IsText(64)
  name!: string;

  @ApiProperty({ type: String, maxLength: PASSWORD_MAX_LENGTH, example: 'correct horse battery staple' })
  @IsString()
  @MinLength(1)
  @IsText(PASSWORD_MAX_LENGTH)
  password!: string;

  @ApiPropertyOptional({
    type: String,
    pattern: '^[0-9]{6}$',
    description:
      'The six-digit code of the authenticator app, for an account with a second factor (without it, such an account answers 401 with secondFactor "totp")',
    example: '492039',
  })
  @AbsentOr()
  @IsString()
  @IsText(16)
  code?: string;
}

export class CreateStaffDto {
  @ApiProperty({ type: String, pattern: STAFF_NAME_PATTERN.source, example: 'alice' })
  @Matches(STAFF_NAME_PATTERN, { message: NAME_MESSAGE })
  @ValidateBy({
    name: 'isUnreservedName',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !RESERVED_STAFF_NAMES.includes(value),
      defaultMessage: () => `name must not be ${RESERVED_STAFF_NAMES.join(' or ')}`,
    },
  })
  name!: string;

  @ApiProperty({ enum: ROLES, example: 'moderator' })
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role!: Role;

  @ApiProperty({
    type: String,
    minLength: PASSWORD_MIN_LENGTH,
    maxLength: PASSWORD_MAX_LENGTH,
    description: 'Told to the person out of band; they change it after signing in',
    example: 'a long passphrase of words',
  })
  @IsNewPassword()
  password!: string;
}

export class UpdateStaffDto {
  @ApiPropertyOptional({ enum: ROLES, description: 'Applies at once, to the sessions and tokens of the account too' })
  @AbsentOr()
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role?: Role;

  @ApiPropertyOptional({
    type: Boolean,
    description: 'true: ends every session and revokes every token of the account at once; false: it may sign in again',
  })
  @AbsentOr()
  @IsBoolean()
  disabled?: boolean;

  @ApiPropertyOptional({
    type: String,
    minLength: PASSWORD_MIN_LENGTH,
    maxLength: PASSWORD_MAX_LENGTH,
    description: 'A new password (a reset): ends every session of the account',
  })
  @AbsentOr()
  @IsNewPassword()
  password?: string;

  @ApiPropertyOptional({
    type: Boolean,
    enum: [false],
    description:
      "false: turns the account's second factor off (a lost authenticator); the person turns it on again from their own session",
  })
  @AbsentOr()
  @IsIn([false], {
    message: 'secondFactor can only be turned off here (false); the person enrols from their console session',
  })
  secondFactor?: false;
}

export class ChangePasswordDto {
  @ApiProperty({ type: String, maxLength: PASSWORD_MAX_LENGTH })
  @IsString()
  @IsText(PASSWORD_MAX_LENGTH)
  currentPassword!: string;

  @ApiProperty({ type: String, minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH })
  @IsNewPassword()
  newPassword!: string;
}

export class CreateStaffTokenDto {
  @ApiProperty({ type: String, maxLength: 64, description: 'What it is for', example: 'ban script' })
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @IsText(64)
  name!: string;

  @ApiPropertyOptional({ enum: ROLES, description: "At most the account's role; default: the account's role" })
  @AbsentOr()
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role?: Role;
}

export class StaffAccountResponse {
  @ApiProperty({ type: 'integer', example: 3 })
  id!: number;

  @ApiProperty({ type: String, example: 'alice' })
  name!: string;

  @ApiProperty({ enum: ROLES, example: 'moderator' })
  role!: Role;

  @ApiProperty({ type: Boolean, example: false })
  disabled!: boolean;

  @ApiProperty({ type: String, description: 'Local date-time', example: '2026-03-20T18:04:11' })
  createdAt!: string;

  @ApiProperty({ type: String, description: 'Local date-time', example: '2026-03-20T18:04:11' })
  passwordChangedAt!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Local date-time', example: '2026-03-21T09:12:40' })
  lastSignInAt!: string | null;

  @ApiProperty({ type: 'integer', description: 'Personal API tokens held', example: 1 })
  tokens!: number;

  @ApiProperty({ type: Boolean, description: 'Whether sign-in asks for an authenticator code (TOTP)', example: false })
  secondFactor!: boolean;
}

export class StaffPage {
  @ApiProperty({ type: [StaffAccountResponse], description: 'By id' })
  items!: StaffAccountResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

export class StaffTokenResponse {
  @ApiProperty({ type: 'integer', example: 7 })
  id!: number;

  @ApiProperty({ type: String, example: 'ban script' })
  name!: string;

  @ApiProperty({ enum: ROLES, description: "It acts with this role or its account's, whichever is lower" })
  role!: Role;

  @ApiProperty({ type: String, description: 'Local date-time', example: '2026-03-20T18:04:11' })
  createdAt!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Local date-time of its last use, to the minute',
    example: '2026-03-21T09:12:00',
  })
  lastUsedAt!: string | null;
}

export class CreatedStaffTokenResponse extends StaffTokenResponse {
  @ApiProperty({ type: String, description: 'The token: shown only here, never stored', example: 'rst_3q2…' })
  token!: string;
}

export class StaffTokenList {
  @ApiProperty({ type: [StaffTokenResponse], description: 'Oldest first' })
  items!: StaffTokenResponse[];
}

export class StaffSessionResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 17 })
  id!: number;

  @ApiProperty({ type: String, description: 'Local date-time of the sign-in' })
  createdAt!: string;

  @ApiProperty({ type: String, description: 'Local date-time of its last request, to the minute' })
  lastSeenAt!: string;

  @ApiProperty({ type: String, nullable: true, example: '203.0.113.7' })
  sourceAddress!: string | null;
}

export class StaffAccountDetail extends StaffAccountResponse {
  @ApiProperty({ type: [StaffTokenResponse], description: 'Its personal API tokens (never the tokens themselves)' })
  tokenList!: StaffTokenResponse[];

  @ApiProperty({ type: [StaffSessionResponse], description: 'Its live console sessions, newest first' })
  sessions!: StaffSessionResponse[];
}

export class SessionInfo {
  @ApiProperty({ type: String, description: 'Local date-time at which the session ends whatever happens' })
  expiresAt!: string;

  @ApiProperty({ type: 'integer', description: 'It ends sooner after this many seconds without a request' })
  idleTimeoutSeconds!: number;
}

export class MeResponse {
  @ApiProperty({ type: String, description: 'The account name, or ADMIN_TOKEN', example: 'alice' })
  name!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null for ADMIN_TOKEN', example: 3 })
  accountId!: number | null;

  @ApiProperty({ enum: ROLES, description: "What the caller may do now (a token's role at most its account's)" })
  role!: Role;

  @ApiProperty({ enum: PERMISSION_NAMES, isArray: true })
  permissions!: Permission[];

  @ApiProperty({ enum: ['ADMIN_TOKEN', 'session', 'token'], description: 'How the caller signed in' })
  credential!: 'ADMIN_TOKEN' | 'session' | 'token';

  @ApiProperty({ type: SessionInfo, nullable: true, description: 'The console session; null for a bearer token' })
  session!: SessionInfo | null;

  @ApiProperty({
    type: String,
    description: "The service's time zone (IANA), in which every local date-time of the API is",
    example: 'UTC',
  })
  timeZone!: string;

  @ApiProperty({
    type: Boolean,
    description: "Whether the account's sign-in asks for an authenticator code (false for ADMIN_TOKEN)",
  })
  secondFactor!: boolean;
}

export class SignInResponse extends MeResponse {
  @ApiProperty({
    type: String,
    description: 'Send it as X-CSRF-Token with every request of the session (also in the rhythmc_csrf cookie)',
  })
  csrfToken!: string;
}

/** Re-authentication for changing the second factor: the current password. */
export class TotpPasswordDto {
  @ApiProperty({ type: String, maxLength: PASSWORD_MAX_LENGTH })
  @IsString()
  @IsText(PASSWORD_MAX_LENGTH)
  password!: string;
}

export class ConfirmTotpDto {
  @ApiProperty({
    type: String,
    pattern: '^[0-9]{6}$',
    description: 'A code the authenticator app shows now',
    example: '492039',
  })
  @IsString()
  @IsText(16)
  code!: string;
}

export class TotpEnrolmentResponse {
  @ApiProperty({
    type: String,
    description: 'The secret (base32), shown this once, for typing into the app',
    example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  })
  secret!: string;

  @ApiProperty({
    type: String,
    description: 'The otpauth:// URI an authenticator app reads (as a QR code or pasted)',
    example:
      'otpauth://totp/rhythmc:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=rhythmc&algorithm=SHA1&digits=6&period=30',
  })
  uri!: string;
}
