import { Client, Pool } from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { PgDeliveryStore } from '../../src/webhooks/webhook-delivery-store';
import { freshDatabase, TestDatabase } from '../support/test-app';

/**
 * The delivery thread's claims and records commit without waiting for the WAL's flush
 * (docs/decisions.md "Webhooks", asynchronous commits), through a setting local to each
 * statement's own transaction: in effect when the transaction commits, gone after it, so a pooled
 * connection (PgBouncer in transaction mode, the embedded database's one shared session) keeps
 * synchronous commits for everyone else. Driven on the real database, both kinds.
 */
describe('Webhook delivery bookkeeping: asynchronous commits, local to each statement', () => {
  let database: TestDatabase;
  let embedded: EmbeddedDatabase | null = null;
  let client: Client;
  let store: PgDeliveryStore;
  let webhookId: number;

  /** The setting the connection's current transaction (or session) runs with. */
  const synchronousCommit = async () =>
    (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit;

  /** A due delivery of an enabled webhook; returns its id. */
  const pendingDelivery = async () =>
    (
      await client.query<{ id: string }>(
        `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload, next_attempt_at)
         VALUES ($1, gen_random_uuid(), 'player.banned', '{}'::jsonb, now() - interval '1 second') RETURNING id`,
        [webhookId],
      )
    ).rows[0].id;

  beforeAll(async () => {
    database = await freshDatabase();
    embedded = database.env.DATABASE_URL ? null : await EmbeddedDatabase.start(database.env.DATA_DIR);
    client = new Client({ connectionString: embedded?.url ?? database.env.DATABASE_URL });
    await client.connect();
    // The store on this one connection, so that the test can open a transaction around a statement.
    const onClient = {
      connect: () => Promise.resolve({ query: client.query.bind(client), release: () => undefined }),
    } as unknown as Pool;
    store = new PgDeliveryStore(onClient);
    webhookId = (
      await client.query<{ id: number }>(
        `INSERT INTO webhook (name, url, events, secret) VALUES ('w', 'https://example.com/hook', '{player.banned}', 's') RETURNING id`,
      )
    ).rows[0].id;
  });

  afterAll(async () => {
    await client?.end();
    await embedded?.stop();
    await database?.drop();
  });

  it('a claim, a group of successes and a failure each turn synchronous_commit off for their own transaction', async () => {
    const id = await pendingDelivery();
    expect(await synchronousCommit()).toBe('on');

    await client.query('BEGIN');
    try {
      expect((await store.claimDue(5, 30_000)).map((claimed) => claimed.id)).toEqual([id]);
      expect(await synchronousCommit()).toBe('off');
    } finally {
      await client.query('ROLLBACK');
    }

    await client.query('BEGIN');
    try {
      await store.markDelivered([{ id, status: 204 }]);
      expect(await synchronousCommit()).toBe('off');
    } finally {
      await client.query('ROLLBACK');
    }

    await client.query('BEGIN');
    try {
      await store.markFailed(id, webhookId, { status: 500, error: 'HTTP 500' }, 10_000);
      expect(await synchronousCommit()).toBe('off');
    } finally {
      await client.query('ROLLBACK');
    }
    expect(await synchronousCommit()).toBe('on');
  });

  it('outside a transaction the statements do their work and leave the connection synchronous', async () => {
    await client.query(`DELETE FROM webhook_delivery`);
    const id = await pendingDelivery();

    const [claimed] = await store.claimDue(5, 30_000);
    expect(claimed).toMatchObject({ id, attempts: 1 });
    expect(await synchronousCommit()).toBe('on');

    await store.markFailed(id, webhookId, { status: 500, error: 'HTTP 500' }, 10_000);
    expect(await synchronousCommit()).toBe('on');
    await store.markDelivered([{ id, status: 204 }]);
    expect(await synchronousCommit()).toBe('on');

    const rows = await client.query<{ state: string; attempts: number; last_status: number }>(
      'SELECT state, attempts, last_status FROM webhook_delivery WHERE id = $1',
      [id],
    );
    expect(rows.rows).toEqual([{ state: 'delivered', attempts: 1, last_status: 204 }]);
    const webhook = await client.query<{ failing_since: Date | null }>(
      'SELECT failing_since FROM webhook WHERE id = $1',
      [webhookId],
    );
    expect(webhook.rows).toEqual([{ failing_since: null }]);
  });
});
