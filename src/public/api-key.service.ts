import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { TokenService } from '../auth/token.service';
import { NotFoundError } from '../common/errors/app-error';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { ListQuery, Page, toPage } from '../common/pagination/list-query';
import { formatLocalDateTime } from '../common/time';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ApiKeyRepository, KeyGrant } from './api-key.repository';
import { ApiKeyResponse, CreateApiKeyDto, CreatedApiKeyResponse, UpdateApiKeyDto } from './dto/api-key.dto';
import type { PublicApiKeyEntity } from './entities/public-api-key.entity';
import { API_KEY_PATTERN, API_KEY_PREFIX, type PublicApiScope } from './public-api.rules';

export const API_KEY_LIST = 'api-keys';

/** How long this instance trusts a key it looked up; bounds a revocation whose event was lost. */
export const KEY_MEMO_MS = 30_000;
/** Live keys are a handful per network; the bound only stops a flood of distinct keys. */
const MEMO_MAX_ENTRIES = 10_000;
/** Each instance writes the last use of its keys this often (and when it stops). */
export const LAST_USE_FLUSH_MS = 60_000;

/** A key a call presented, once found live: what the guard needs. */
export interface ResolvedKey {
  id: number;
  scopes: ReadonlySet<PublicApiScope>;
  /** Calls a minute in force (its own, or PUBLIC_API_KEY_RATE_LIMIT). */
  rateLimit: number;
}

/**
 * The public API's keys: issued (shown once, SHA-256 at rest through TokenService, like every
 * credential of the service), listed, changed and revoked by staff; resolved for each call.
 *
 * A call looks its key up by hash in a memo of KEY_MEMO_MS; an admin write empties it here and,
 * through the event bus, on every instance (`public_api_keys.changed`), so a revocation is seen at
 * once everywhere, and within KEY_MEMO_MS where its event was lost (Redis down). Unknown hashes are
 * not kept: they go to the database, limited per address by the guard.
 *
 * Last use is noted in memory per call and written for every key used since the previous write
 * in one statement each LAST_USE_FLUSH_MS, when the module stops, and before staff list the keys:
 * never a write per call.
 */
@Injectable()
export class ApiKeyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PublicApi');
  private readonly memo = new Map<string, { key: ResolvedKey; until: number }>();
  /** Bumped by every drop: a lookup that started before one must not be kept after it. */
  private epoch = 0;
  private readonly lastUse = new Map<number, number>();
  private flushTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly tokens: TokenService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_BUS) private readonly events: EventBus,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribe((event) => {
      if (event.type === 'public_api_keys.changed' || event.type === 'events.resumed') this.drop();
    });
    this.flushTimer = setInterval(() => void this.flushLastUse(), LAST_USE_FLUSH_MS);
    this.flushTimer.unref();
  }

  /** Before the database closes (Nest destroys modules before its shutdown hooks). */
  async onModuleDestroy(): Promise<void> {
    this.unsubscribe?.();
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flushLastUse();
  }

  /** The live key presented (any text); null when it is not a key, unknown or revoked. */
  async resolve(presented: string): Promise<ResolvedKey | null> {
    if (!API_KEY_PATTERN.test(presented)) return null;
    const hash = this.tokens.hash(presented);
    const now = Date.now();
    const memo = this.memo.get(hash);
    if (memo && memo.until > now) return memo.key;
    const epoch = this.epoch;
    const grant = await this.keys.grantByHash(hash);
    if (grant === null) {
      this.memo.delete(hash);
      return null;
    }
    const key = this.toResolved(grant);
    if (epoch === this.epoch) {
      if (this.memo.size >= MEMO_MAX_ENTRIES) this.memo.clear();
      this.memo.set(hash, { key, until: now + KEY_MEMO_MS });
    }
    return key;
  }

  /** A call of this key was answered: noted here, written with the next flush. */
  noteUse(id: number): void {
    this.lastUse.set(id, Date.now());
  }

  async create(body: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    const key = `${API_KEY_PREFIX}${this.tokens.issue().token}`;
    const stored = await this.keys.insert({
      name: body.name,
      keyHash: this.tokens.hash(key),
      scopes: [...body.scopes].sort(),
      rateLimit: body.rateLimit ?? null,
    });
    return { ...this.toResponse(stored), key };
  }

  async list(query: ListQuery<Record<string, never>>): Promise<Page<ApiKeyResponse>> {
    await this.flushLastUse();
    const rows = await this.keys.list(query.after === undefined ? undefined : Number(query.after), query.limit + 1);
    return toPage(
      rows,
      query,
      API_KEY_LIST,
      (row) => String(row.id),
      (row) => this.toResponse(row),
    );
  }

  async update(id: number, body: UpdateApiKeyDto): Promise<ApiKeyResponse> {
    const changes: Partial<Pick<PublicApiKeyEntity, 'name' | 'scopes' | 'rateLimit'>> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.scopes !== undefined) changes.scopes = [...body.scopes].sort();
    if (body.rateLimit !== undefined) changes.rateLimit = body.rateLimit;
    const updated = await this.keys.update(id, changes);
    if (updated === null) throw new NotFoundError(`No live API key with id ${id}`);
    await this.changed();
    return this.toResponse(updated);
  }

  async revoke(id: number): Promise<void> {
    if (!(await this.keys.revoke(id))) throw new NotFoundError(`No API key with id ${id}`);
    await this.changed();
  }

  /** After a key write committed: drop here, then tell the other instances. */
  private async changed(): Promise<void> {
    this.drop();
    await this.events.publish({ type: 'public_api_keys.changed' });
  }

  private drop(): void {
    this.epoch++;
    this.memo.clear();
  }

  private async flushLastUse(): Promise<void> {
    if (this.lastUse.size === 0) return;
    const uses = new Map(this.lastUse);
    this.lastUse.clear();
    try {
      await this.keys.recordLastUse(uses);
    } catch (error) {
      // Kept for the next flush (a newer use of the same key wins).
      for (const [id, at] of uses) if (!this.lastUse.has(id)) this.lastUse.set(id, at);
      this.logger.warn(
        `Could not record the last use of API keys: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private toResolved(grant: KeyGrant): ResolvedKey {
    return {
      id: grant.id,
      scopes: new Set(grant.scopes as PublicApiScope[]),
      rateLimit: grant.rateLimit ?? this.config.publicApiKeyRateLimit,
    };
  }

  private toResponse(row: PublicApiKeyEntity): ApiKeyResponse {
    return {
      id: row.id,
      name: row.name,
      scopes: row.scopes as PublicApiScope[],
      rateLimit: row.rateLimit,
      effectiveRateLimit: row.rateLimit ?? this.config.publicApiKeyRateLimit,
      createdAt: formatLocalDateTime(row.createdAt),
      lastUsedAt: row.lastUsedAt ? formatLocalDateTime(row.lastUsedAt) : null,
      revokedAt: row.revokedAt ? formatLocalDateTime(row.revokedAt) : null,
    };
  }
}
