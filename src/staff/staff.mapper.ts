import { isRole, type Role } from '../auth/permissions';
import { formatLocalDateTime } from '../common/time';
import type { StaffAccountResponse, StaffSessionResponse, StaffTokenResponse } from './dto/staff.dto';
import type { StaffAccountEntity } from './entities/staff-account.entity';
import type { StaffSessionEntity } from './entities/staff-session.entity';
import type { StaffTokenEntity } from './entities/staff-token.entity';

/** A role column's value (its check constraint lists only roles). */
export function roleOf(value: string): Role {
  if (!isRole(value)) throw new Error(`A staff row holds the unknown role ${value}`);
  return value;
}

export function toAccountResponse(account: StaffAccountEntity, tokens: number): StaffAccountResponse {
  return {
    id: account.id,
    name: account.name,
    role: roleOf(account.role),
    disabled: account.disabledAt !== null,
    createdAt: formatLocalDateTime(account.createdAt),
    passwordChangedAt: formatLocalDateTime(account.passwordChangedAt),
    lastSignInAt: account.lastSignInAt === null ? null : formatLocalDateTime(account.lastSignInAt),
    tokens,
    secondFactor: account.totpSecret !== null,
  };
}

export function toTokenResponse(token: StaffTokenEntity): StaffTokenResponse {
  return {
    id: token.id,
    name: token.name,
    role: roleOf(token.role),
    createdAt: formatLocalDateTime(token.createdAt),
    lastUsedAt: token.lastUsedAt === null ? null : formatLocalDateTime(token.lastUsedAt),
  };
}

export function toSessionResponse(session: StaffSessionEntity): StaffSessionResponse {
  return {
    id: Number(session.id),
    createdAt: formatLocalDateTime(session.createdAt),
    lastSeenAt: formatLocalDateTime(session.lastSeenAt),
    sourceAddress: session.sourceAddress,
  };
}

/** The service's time zone (the process TZ): every local date-time of the API is in it. */
export function serviceTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
