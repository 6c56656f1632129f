import { Injectable } from '@nestjs/common';
import type { AdminCaller } from '../auth/auth.types';
import { roleRank } from '../auth/permissions';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
} from '../common/errors/app-error';
import { ListQuery, toPage } from '../common/pagination/list-query';
import { isUniqueViolation } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import {
  ChangePasswordDto,
  ConfirmTotpDto,
  CreatedStaffTokenResponse,
  CreateStaffDto,
  CreateStaffTokenDto,
  StaffAccountDetail,
  StaffAccountResponse,
  StaffPage,
  StaffTokenList,
  TotpEnrolmentResponse,
  TotpPasswordDto,
  UpdateStaffDto,
} from './dto/staff.dto';
import type { StaffAccountEntity } from './entities/staff-account.entity';
import { PasswordHasher } from './password-hasher';
import { SignInLimiter } from './sign-in.limiter';
import { toAccountResponse, toSessionResponse, toTokenResponse } from './staff.mapper';
import { StaffRepository } from './staff.repository';
import { newDeviceKey, newPersonalToken, secretHash } from './staff-secrets';
import { matchTotp, newTotpSecret, totpUri } from './totp';

/** The issuer authenticator apps show beside the account name. */
export const TOTP_ISSUER = 'rhythmc';

export const STAFF_LIST = 'staff';
/** Personal API tokens one account may hold. */
export const MAX_TOKENS_PER_ACCOUNT = 50;

/**
 * Staff accounts and personal API tokens (docs/decisions.md "Staff accounts"). Every change is one
 * transaction; one that would leave no enabled owner locks the owners' rows first and is refused
 * (409), so two owners cannot demote each other at once.
 */
@Injectable()
export class StaffService {
  constructor(
    private readonly staff: StaffRepository,
    private readonly hasher: PasswordHasher,
    private readonly limiter: SignInLimiter,
    private readonly transactions: TransactionService,
  ) {}

  async list(query: ListQuery<Record<string, never>>): Promise<StaffPage> {
    const rows = await this.staff.listAccounts(
      query.after === undefined ? undefined : Number(query.after),
      query.limit + 1,
    );
    const counts = await this.staff.tokenCounts(rows.map((row) => row.id));
    return toPage(
      rows,
      query,
      STAFF_LIST,
      (row) => String(row.id),
      (row) => toAccountResponse(row, counts.get(row.id) ?? 0),
    );
  }

  async get(id: number): Promise<StaffAccountDetail> {
    const account = await this.staff.findAccount(id);
    if (!account) throw noAccount(id);
    const [tokens, sessions] = await Promise.all([this.staff.tokensOf(id), this.staff.sessionsOf(id)]);
    return {
      ...toAccountResponse(account, tokens.length),
      tokenList: tokens.map(toTokenResponse),
      sessions: sessions.map(toSessionResponse),
    };
  }

  async create(caller: AdminCaller, body: CreateStaffDto): Promise<StaffAccountResponse> {
    requireNoPersonalToken(caller, 'Staff accounts are created');
    const passwordHash = await this.hasher.hash(body.password);
    try {
      const account = await this.transactions.run((manager) =>
        this.staff.insertAccount(
          {
            name: body.name,
            role: body.role,
            passwordHash,
            deviceKey: newDeviceKey(),
            passwordChangedAt: new Date(),
          },
          manager,
        ),
      );
      return toAccountResponse(account, 0);
    } catch (error) {
      if (isUniqueViolation(error)) throw BadRequestError.field('name', `${body.name} is taken`);
      throw error;
    }
  }

  /**
   * A role change applies from the account's next request on; disabling ends its sessions and
   * revokes its tokens at once; a new password (a reset) ends its sessions.
   */
  async update(caller: AdminCaller, id: number, body: UpdateStaffDto): Promise<StaffAccountResponse> {
    if (
      body.role === undefined &&
      body.disabled === undefined &&
      body.password === undefined &&
      body.secondFactor === undefined
    )
      throw new BadRequestError('Give at least one of role, disabled, password, secondFactor');
    if (body.password !== undefined || body.secondFactor !== undefined) {
      if (id === caller.accountId)
        throw new ForbiddenError(
          'Your own password and authenticator change at /admin/me/password and /admin/me/totp, with your current password',
        );
      requireNoPersonalToken(caller, 'Passwords are reset and authenticators turned off');
    }
    const passwordHash = body.password === undefined ? null : await this.hasher.hash(body.password);
    const account = await this.transactions.run(async (manager) => {
      const owners = await this.staff.lockEnabledOwners(manager);
      const current = await this.staff.lockAccount(id, manager);
      if (!current) throw noAccount(id);
      const staysOwner = (body.role ?? current.role) === 'owner' && !(body.disabled ?? current.disabledAt !== null);
      if (owners.includes(id) && !staysOwner && owners.length === 1)
        throw new ConflictError(`${current.name} is the last enabled owner: make another account owner first`);
      const now = new Date();
      const patch: Parameters<StaffRepository['updateAccount']>[1] = {};
      if (body.role !== undefined) patch.role = body.role;
      if (body.disabled === true && current.disabledAt === null) {
        patch.disabledAt = now;
        await this.staff.deleteSessionsOf(id, manager);
        await this.staff.deleteTokensOf(id, manager);
      }
      if (body.disabled === false) patch.disabledAt = null;
      if (passwordHash !== null) {
        Object.assign(patch, { passwordHash, deviceKey: newDeviceKey(), passwordChangedAt: now });
        await this.staff.deleteSessionsOf(id, manager);
      }
      if (Object.keys(patch).length > 0) await this.staff.updateAccount(id, patch, manager);
      if (body.secondFactor === false) await this.staff.clearTotp(id, manager);
      return (await this.staff.findAccount(id, manager)) as StaffAccountEntity;
    });
    return toAccountResponse(account, (await this.staff.tokensOf(id)).length);
  }

  /** The account, its sessions and its tokens; its audit rows stay (they name it). */
  async delete(id: number): Promise<StaffAccountResponse> {
    return this.transactions.run(async (manager) => {
      const owners = await this.staff.lockEnabledOwners(manager);
      const account = await this.staff.lockAccount(id, manager);
      if (!account) throw noAccount(id);
      if (owners.includes(id) && owners.length === 1)
        throw new ConflictError(`${account.name} is the last enabled owner: make another account owner first`);
      const tokens = await this.staff.countTokensOf(id, manager);
      await this.staff.deleteAccount(id, manager);
      return toAccountResponse(account, tokens);
    });
  }

  /** The caller's own password; its other sessions end, this one stays. */
  async changeOwnPassword(caller: AdminCaller, body: ChangePasswordDto, address: string | null): Promise<void> {
    const sessionId = requireSession(caller, 'Passwords are changed');
    const account = await this.reauthenticate(
      caller,
      body.currentPassword,
      address,
      'Passwords are changed',
      'currentPassword',
    );
    const passwordHash = await this.hasher.hash(body.newPassword);
    await this.transactions.run(async (manager) => {
      await this.staff.updateAccount(
        account.id,
        { passwordHash, deviceKey: newDeviceKey(), passwordChangedAt: new Date() },
        manager,
      );
      await this.staff.deleteSessionsOf(account.id, manager, sessionId);
    });
  }

  /**
   * Starts turning on a second factor: a new secret (shown once, in this answer) that becomes the
   * account's only when a code made from it is confirmed (confirmTotp). The current password is
   * asked first, so that a session left open cannot bind someone else's authenticator.
   */
  async startTotp(caller: AdminCaller, body: TotpPasswordDto, address: string | null): Promise<TotpEnrolmentResponse> {
    const account = await this.reauthenticate(caller, body.password, address, 'A second factor is set up', 'password');
    if (account.totpSecret !== null)
      throw new ConflictError('A second factor is already on: turn it off first (DELETE /admin/me/totp)');
    const secret = newTotpSecret();
    await this.staff.setPendingTotp(account.id, secret);
    return { secret, uri: totpUri(TOTP_ISSUER, account.name, secret) };
  }

  /** Turns the second factor on with a code of the secret startTotp gave. */
  async confirmTotp(caller: AdminCaller, body: ConfirmTotpDto): Promise<void> {
    requireSession(caller, 'A second factor is set up');
    const account = await this.staff.findAccount(caller.accountId as number);
    if (!account) throw new UnauthorizedError('The session has ended; sign in again');
    const pending = account.totpPendingSecret;
    if (pending === null) throw new BadRequestError('No second factor is being set up: start with POST /admin/me/totp');
    const step = matchTotp(pending, body.code, Date.now(), null);
    if (step === null) throw BadRequestError.field('code', 'is wrong: enter the code the app shows now');
    if (!(await this.staff.enableTotp(account.id, pending, step, new Date())))
      throw new ConflictError('The set-up was started again meanwhile: use the newest secret');
  }

  /** Turns the caller's second factor off (their password again). */
  async removeOwnTotp(caller: AdminCaller, body: TotpPasswordDto, address: string | null): Promise<void> {
    const account = await this.reauthenticate(
      caller,
      body.password,
      address,
      'A second factor is turned off',
      'password',
    );
    await this.staff.clearTotp(account.id);
  }

  /** The caller's account after its password was given again; wrong passwords count as failed sign-ins. */
  private async reauthenticate(
    caller: AdminCaller,
    password: string,
    address: string | null,
    what: string,
    field: string,
  ): Promise<StaffAccountEntity> {
    requireSession(caller, what);
    const account = await this.staff.findAccount(caller.accountId as number);
    if (!account) throw new UnauthorizedError('The session has ended; sign in again');
    const target = { kind: 'account', accountId: account.id } as const;
    await this.limiter.assertTargetOpen(target);
    if (!(await this.hasher.verify(password, account.passwordHash))) {
      await this.limiter.failed(address, target);
      throw BadRequestError.field(field, 'is wrong');
    }
    return account;
  }

  async ownTokens(caller: AdminCaller): Promise<StaffTokenList> {
    return { items: (await this.staff.tokensOf(requireAccount(caller))).map(toTokenResponse) };
  }

  /** A personal API token of the caller's, with the caller's role or a lower one; the token is in this answer only. */
  async createOwnToken(caller: AdminCaller, body: CreateStaffTokenDto): Promise<CreatedStaffTokenResponse> {
    requireSession(caller, 'Personal API tokens are created');
    const accountId = caller.accountId as number;
    const role = body.role ?? caller.role;
    if (roleRank(role) > roleRank(caller.role))
      throw BadRequestError.field('role', `must be at most your own (${caller.role})`);
    const token = newPersonalToken();
    const created = await this.transactions.run(async (manager) => {
      if ((await this.staff.countTokensOf(accountId, manager)) >= MAX_TOKENS_PER_ACCOUNT)
        throw new BadRequestError(`An account holds at most ${MAX_TOKENS_PER_ACCOUNT} tokens: revoke one first`);
      return this.staff.insertToken({ accountId, name: body.name.trim(), role, tokenHash: secretHash(token) }, manager);
    });
    return { ...toTokenResponse(created), token };
  }

  revokeOwnToken(caller: AdminCaller, tokenId: number): Promise<void> {
    return this.revokeToken(requireAccount(caller), tokenId);
  }

  /** An owner revokes someone's token. */
  async revokeToken(accountId: number, tokenId: number): Promise<void> {
    const deleted = await this.transactions.run((manager) => this.staff.deleteToken(accountId, tokenId, manager));
    if (!deleted) throw new NotFoundError(`No token ${tokenId} of staff account ${accountId}`);
  }
}

function noAccount(id: number): NotFoundError {
  return new NotFoundError(`No staff account with id ${id}`);
}

/** The caller's account id; ADMIN_TOKEN has none. */
function requireAccount(caller: AdminCaller): number {
  if (caller.accountId === null)
    throw new ForbiddenError('ADMIN_TOKEN belongs to no staff account: sign in to the console as a staff member');
  return caller.accountId;
}

/**
 * Not a personal API token: a console session or ADMIN_TOKEN. What gives a way in that outlives
 * the credential used (a new account's password, a reset, an authenticator removed) would let a
 * leaked token outlive its revocation (docs/decisions.md "Staff accounts").
 */
function requireNoPersonalToken(caller: AdminCaller, what: string): void {
  if (caller.accountId !== null && caller.sessionId === null)
    throw new ForbiddenError(`${what} from a console session or with ADMIN_TOKEN, not with a personal API token`);
}

/** The caller's session id: some changes need the person at the console, not a token. */
function requireSession(caller: AdminCaller, what: string): string {
  requireAccount(caller);
  if (caller.sessionId === null) throw new ForbiddenError(`${what} from a console session, not with a token`);
  return caller.sessionId;
}
