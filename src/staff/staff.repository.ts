import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, Not } from 'typeorm';
import { StaffAccountEntity } from './entities/staff-account.entity';
import { StaffSessionEntity } from './entities/staff-session.entity';
import { StaffTokenEntity } from './entities/staff-token.entity';

/** A session with what the guard needs of its account, read in one statement. */
export interface SessionWithAccount {
  sessionId: string;
  createdAt: Date;
  lastSeenAt: Date;
  accountId: number;
  name: string;
  role: string;
  disabledAt: Date | null;
}

/** A token with what the guard needs of its account, read in one statement. */
export interface TokenWithAccount {
  tokenId: number;
  tokenRole: string;
  lastUsedAt: Date | null;
  accountId: number;
  name: string;
  accountRole: string;
  disabledAt: Date | null;
}

type NewAccount = Pick<StaffAccountEntity, 'name' | 'role' | 'passwordHash' | 'deviceKey' | 'passwordChangedAt'>;

/** Staff accounts, their sessions and their personal API tokens. */
@Injectable()
export class StaffRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private accounts(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StaffAccountEntity);
  }

  private sessions(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StaffSessionEntity);
  }

  private tokens(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StaffTokenEntity);
  }

  // Accounts

  findAccountByName(name: string): Promise<StaffAccountEntity | null> {
    return this.accounts().findOneBy({ name });
  }

  findAccount(id: number, manager?: EntityManager): Promise<StaffAccountEntity | null> {
    return this.accounts(manager).findOneBy({ id });
  }

  /** The account, row-locked until the transaction ends. */
  lockAccount(id: number, manager: EntityManager): Promise<StaffAccountEntity | null> {
    return this.accounts(manager)
      .createQueryBuilder('a')
      .where('a.id = :id', { id })
      .setLock('pessimistic_write')
      .getOne();
  }

  /**
   * The ids of the enabled owners, their rows locked until the transaction ends: two changes that
   * each leave one owner cannot both pass (the second waits and counts again).
   */
  async lockEnabledOwners(manager: EntityManager): Promise<number[]> {
    const rows = await this.accounts(manager)
      .createQueryBuilder('a')
      .select('a.id', 'id')
      .where("a.role = 'owner' AND a.disabled_at IS NULL")
      .orderBy('a.id')
      .setLock('pessimistic_write')
      .getRawMany<{ id: number }>();
    return rows.map((row) => Number(row.id));
  }

  insertAccount(account: NewAccount, manager: EntityManager): Promise<StaffAccountEntity> {
    const repository = this.accounts(manager);
    return repository.save(repository.create({ ...account, disabledAt: null, lastSignInAt: null }));
  }

  async updateAccount(
    id: number,
    patch: Partial<
      Pick<StaffAccountEntity, 'role' | 'disabledAt' | 'passwordHash' | 'deviceKey' | 'passwordChangedAt'>
    >,
    manager: EntityManager,
  ): Promise<void> {
    await this.accounts(manager).update({ id }, patch);
  }

  /** Keeps a secret being enrolled (replacing any earlier one). */
  async setPendingTotp(id: number, secret: string): Promise<void> {
    await this.accounts().update({ id }, { totpPendingSecret: secret });
  }

  /** The pending secret becomes the account's second factor, with the step of the code that confirmed it. */
  async enableTotp(id: number, secret: string, step: number, at: Date): Promise<boolean> {
    const result = await this.accounts().update(
      { id, totpPendingSecret: secret },
      { totpSecret: secret, totpPendingSecret: null, totpLastStep: step, totpEnabledAt: at },
    );
    return (result.affected ?? 0) === 1;
  }

  /** No second factor (and no enrolment under way). */
  async clearTotp(id: number, manager?: EntityManager): Promise<void> {
    await this.accounts(manager).update(
      { id },
      { totpSecret: null, totpPendingSecret: null, totpLastStep: null, totpEnabledAt: null },
    );
  }

  /**
   * Records `step` as the last code used, only if it is later than the one recorded: false when a
   * concurrent sign-in used it (or a later one) first, so one code opens one session.
   */
  async useTotpStep(id: number, step: number): Promise<boolean> {
    const result = await this.accounts()
      .createQueryBuilder()
      .update()
      .set({ totpLastStep: step })
      .where('id = :id AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < :step)', {
        id,
        step,
      })
      .execute();
    return (result.affected ?? 0) === 1;
  }

  async setLastSignIn(id: number, at: Date, manager: EntityManager): Promise<void> {
    await this.accounts(manager).update({ id }, { lastSignInAt: at });
  }

  /** Deletes the account; its sessions and tokens go with it (foreign keys ON DELETE CASCADE). */
  async deleteAccount(id: number, manager: EntityManager): Promise<boolean> {
    const result = await this.accounts(manager).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** By id ascending, after `afterId`. */
  listAccounts(afterId: number | undefined, limit: number): Promise<StaffAccountEntity[]> {
    const query = this.accounts().createQueryBuilder('a').orderBy('a.id', 'ASC').limit(limit);
    if (afterId !== undefined) query.where('a.id > :afterId', { afterId });
    return query.getMany();
  }

  /** How many personal tokens each of the accounts holds. */
  async tokenCounts(accountIds: number[]): Promise<Map<number, number>> {
    if (accountIds.length === 0) return new Map();
    const rows = await this.tokens()
      .createQueryBuilder('t')
      .select('t.account_id', 'accountId')
      .addSelect('count(*)::int', 'count')
      .where({ accountId: In(accountIds) })
      .groupBy('t.account_id')
      .getRawMany<{ accountId: number; count: number }>();
    return new Map(rows.map((row) => [Number(row.accountId), Number(row.count)]));
  }

  // Sessions

  async insertSession(
    session: Pick<StaffSessionEntity, 'accountId' | 'tokenHash' | 'lastSeenAt' | 'sourceAddress'>,
    manager: EntityManager,
  ): Promise<StaffSessionEntity> {
    const repository = this.sessions(manager);
    return repository.save(repository.create(session));
  }

  async findSession(tokenHash: string): Promise<SessionWithAccount | null> {
    const rows = await this.dataSource.query<SessionWithAccount[]>(
      `SELECT s.id::text AS "sessionId", s.created_at AS "createdAt", s.last_seen_at AS "lastSeenAt",
              a.id AS "accountId", a.name, a.role, a.disabled_at AS "disabledAt"
         FROM staff_session s JOIN staff_account a ON a.id = s.account_id
        WHERE s.token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  async sessionCreatedAt(id: string): Promise<Date | null> {
    const session = await this.sessions().findOne({ where: { id }, select: { id: true, createdAt: true } });
    return session?.createdAt ?? null;
  }

  async touchSession(id: string, at: Date): Promise<void> {
    await this.sessions().update({ id }, { lastSeenAt: at });
  }

  async deleteSession(id: string, manager?: EntityManager): Promise<void> {
    await this.sessions(manager).delete({ id });
  }

  /** Ends every session of the account but `keep` (the caller's own, when it changes its password). */
  async deleteSessionsOf(accountId: number, manager: EntityManager, keep?: string): Promise<void> {
    await this.sessions(manager).delete(keep === undefined ? { accountId } : { accountId, id: Not(keep) });
  }

  /**
   * Deletes the account's sessions that have ended (idle or past their maximum) and all but the
   * newest `keep` of the others: sign-ins never pile up rows.
   */
  async pruneSessionsOf(
    accountId: number,
    idleSince: Date,
    createdSince: Date,
    keep: number,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `DELETE FROM staff_session
        WHERE account_id = $1
          AND (last_seen_at <= $2 OR created_at <= $3
               OR id NOT IN (SELECT id FROM staff_session WHERE account_id = $1 ORDER BY id DESC LIMIT $4))`,
      [accountId, idleSince, createdSince, keep],
    );
  }

  /** The account's sessions, newest first. */
  sessionsOf(accountId: number): Promise<StaffSessionEntity[]> {
    return this.sessions().find({ where: { accountId }, order: { id: 'DESC' } });
  }

  // Tokens

  async insertToken(
    token: Pick<StaffTokenEntity, 'accountId' | 'name' | 'role' | 'tokenHash'>,
    manager: EntityManager,
  ): Promise<StaffTokenEntity> {
    const repository = this.tokens(manager);
    return repository.save(repository.create({ ...token, lastUsedAt: null }));
  }

  countTokensOf(accountId: number, manager: EntityManager): Promise<number> {
    return this.tokens(manager).countBy({ accountId });
  }

  async findToken(tokenHash: string): Promise<TokenWithAccount | null> {
    const rows = await this.dataSource.query<TokenWithAccount[]>(
      `SELECT t.id AS "tokenId", t.role AS "tokenRole", t.last_used_at AS "lastUsedAt",
              a.id AS "accountId", a.name, a.role AS "accountRole", a.disabled_at AS "disabledAt"
         FROM staff_token t JOIN staff_account a ON a.id = t.account_id
        WHERE t.token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  async touchToken(id: number, at: Date): Promise<void> {
    await this.tokens().update({ id }, { lastUsedAt: at });
  }

  /** The account's tokens, oldest first. */
  tokensOf(accountId: number): Promise<StaffTokenEntity[]> {
    return this.tokens().find({ where: { accountId }, order: { id: 'ASC' } });
  }

  /** Deletes one token of the account; null when the account has no such token. */
  async deleteToken(accountId: number, tokenId: number, manager: EntityManager): Promise<StaffTokenEntity | null> {
    const token = await this.tokens(manager).findOneBy({ id: tokenId, accountId });
    if (!token) return null;
    await this.tokens(manager).delete({ id: tokenId });
    return token;
  }

  async deleteTokensOf(accountId: number, manager: EntityManager): Promise<void> {
    await this.tokens(manager).delete({ accountId });
  }
}
