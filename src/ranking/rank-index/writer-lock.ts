import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import type { DatabasePoolMode } from '../../config/app-config';

/** Held for the life of a rank-index writer on PostgreSQL (memory-rank-index.ts explains why). */
export const RANK_INDEX_LOCK_KEY = 727_005;
const RETRY_MS = 1_000;
const REGAIN_RETRY_MS = 1_000;

export interface WriterLockEvents {
  /** The lock's connection broke: the lock is gone with it. */
  lost(error: Error): void;
  /** The lock is held again after a loss (the database came back). */
  regained(): void;
}

/**
 * The advisory lock that keeps rank-index writers apart, on its own connection: exclusive for an
 * instance with the in-process index, shared for instances with Redis. A session lock; behind
 * PgBouncer's transaction pooling (DATABASE_POOL_MODE=transaction) a transaction's lock instead,
 * held by a transaction left open on the connection (a session lock would stay on whichever
 * server connection PgBouncer lent for the one statement, and the next client of that server
 * connection would inherit it; an open transaction keeps its server connection to this client).
 * At start it waits as long as another writer holds it. When its connection is lost (the database
 * restarted or became unreachable) the lock is gone; it is taken again in the background, every
 * second, once the database answers and no other writer took it meanwhile.
 */
export class WriterLock {
  private client: Client | null = null;
  private closed = false;
  private regainTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly mode: 'exclusive' | 'shared',
    private readonly logger: Logger,
    private readonly events: WriterLockEvents,
    private readonly waitingMessage: string,
    private readonly poolMode: DatabasePoolMode = 'session',
  ) {}

  get held(): boolean {
    return this.client !== null;
  }

  /** Takes the lock, waiting while another writer holds it. */
  async acquire(): Promise<void> {
    let warned = false;
    while (!(await this.tryTake())) {
      if (!warned) {
        this.logger.warn(this.waitingMessage);
        warned = true;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  async release(): Promise<void> {
    this.closed = true;
    if (this.regainTimer) clearTimeout(this.regainTimer);
    const client = this.client;
    this.client = null;
    // The transaction's lock ends with it at once (a pooler would otherwise end it some time after the client went).
    if (client && this.poolMode === 'transaction') await client.query('ROLLBACK').catch(() => undefined);
    await client?.end().catch(() => undefined);
  }

  /** One attempt on a new connection; the connection is kept only when it holds the lock. */
  private async tryTake(): Promise<boolean> {
    const client = new Client({ connectionString: this.url, application_name: 'rhythmc-rank-index' });
    // Until the lock is held, errors surface through the awaited calls below.
    client.on('error', () => undefined);
    try {
      await client.connect();
      const scope = this.poolMode === 'transaction' ? '_xact' : '';
      const fn = `pg_try_advisory${scope}_lock${this.mode === 'exclusive' ? '' : '_shared'}`;
      if (this.poolMode === 'transaction') {
        // Held for the instance's life: a server-side idle timeout must not end the transaction.
        await client.query('BEGIN');
        await client.query('SET LOCAL idle_in_transaction_session_timeout = 0');
      }
      const { rows } = await client.query<{ locked: boolean }>(`SELECT ${fn}($1) AS locked`, [RANK_INDEX_LOCK_KEY]);
      if (!rows[0].locked || this.closed) {
        await client.end();
        return false;
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    client.removeAllListeners('error');
    client.on('error', (error: Error) => this.onLost(client, error));
    client.on('end', () => this.onLost(client, new Error('connection ended')));
    this.client = client;
    return true;
  }

  private onLost(client: Client, error: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.events.lost(error);
    this.scheduleRegain();
  }

  private scheduleRegain(): void {
    if (this.closed) return;
    this.regainTimer = setTimeout(() => {
      this.regainTimer = null;
      this.tryTake().then(
        (taken) => (taken ? this.events.regained() : this.scheduleRegain()),
        () => this.scheduleRegain(),
      );
    }, REGAIN_RETRY_MS);
    this.regainTimer.unref();
  }
}
