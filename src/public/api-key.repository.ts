import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PreparedQueries } from '../database/prepared-queries';
import { PublicApiKeyEntity } from './entities/public-api-key.entity';

/** What a call needs of its key: looked up by hash, kept a while in ApiKeyService's memo. */
export interface KeyGrant {
  id: number;
  scopes: string[];
  rateLimit: number | null;
}

const GRANT_BY_HASH_SQL =
  'SELECT id, scopes, rate_limit FROM public_api_key WHERE key_hash = $1 AND revoked_at IS NULL';

/**
 * Records the latest use of each key: `ids` and `times` pair up; a time never moves a key's last
 * use backwards (two instances flush in any order).
 */
const RECORD_LAST_USE_SQL = `UPDATE public_api_key k SET last_used_at = GREATEST(k.last_used_at, u.at)
  FROM unnest($1::int[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id`;

/** The keys of the public API: their hashes, scopes, limits and last use. */
@Injectable()
export class ApiKeyRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly prepared: PreparedQueries,
  ) {}

  private get keys() {
    return this.dataSource.getRepository(PublicApiKeyEntity);
  }

  insert(key: {
    name: string;
    keyHash: string;
    scopes: string[];
    rateLimit: number | null;
  }): Promise<PublicApiKeyEntity> {
    return this.keys.save(this.keys.create(key));
  }

  findById(id: number): Promise<PublicApiKeyEntity | null> {
    return this.keys.findOne({ where: { id } });
  }

  /** Keys by id ascending after `afterId`, at most `limit`. */
  list(afterId: number | undefined, limit: number): Promise<PublicApiKeyEntity[]> {
    const query = this.keys.createQueryBuilder('k').orderBy('k.id', 'ASC').limit(limit);
    if (afterId !== undefined) query.where('k.id > :after', { after: afterId });
    return query.getMany();
  }

  /** The live (unrevoked) key with this hash; null for an unknown or revoked one. */
  async grantByHash(keyHash: string): Promise<KeyGrant | null> {
    const rows = await this.prepared.run<{ id: number; scopes: string[]; rate_limit: number | null }>(
      'public_api_key_by_hash',
      GRANT_BY_HASH_SQL,
      [keyHash],
    );
    return rows.length === 0 ? null : { id: rows[0].id, scopes: rows[0].scopes, rateLimit: rows[0].rate_limit };
  }

  /** Sets the given fields of a live key; null when there is no live key with this id. */
  async update(
    id: number,
    changes: Partial<Pick<PublicApiKeyEntity, 'name' | 'scopes' | 'rateLimit'>>,
  ): Promise<PublicApiKeyEntity | null> {
    if (Object.keys(changes).length > 0) {
      const result = await this.keys
        .createQueryBuilder()
        .update()
        .set(changes)
        .where('id = :id AND revoked_at IS NULL', { id })
        .execute();
      if (result.affected === 0) return null;
    }
    const key = await this.findById(id);
    return key && key.revokedAt === null ? key : null;
  }

  /** Revokes the key (a revoked key keeps its first revocation time); false when there is no such key. */
  async revoke(id: number): Promise<boolean> {
    const result = await this.keys
      .createQueryBuilder()
      .update()
      .set({ revokedAt: () => 'coalesce(revoked_at, now())' })
      .where('id = :id', { id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  async recordLastUse(uses: ReadonlyMap<number, number>): Promise<void> {
    const ids = [...uses.keys()];
    await this.prepared.run('public_api_key_last_use', RECORD_LAST_USE_SQL, [
      ids,
      ids.map((id) => new Date(uses.get(id) as number)),
    ]);
  }
}
