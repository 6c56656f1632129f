/**
 * What one outbox row per event would save PostgreSQL (issue #45: the upload p99 with three
 * webhooks; docs/benchmarks.md "Webhooks", "The outbox's shape"), apart from the service and
 * before anyone builds it. Both shapes move EVENTS events, each for 3 webhooks, through their
 * bookkeeping on one connection, with round trips as the delivery thread makes them; nothing is
 * sent. PostgreSQL's CPU (every postgres process, from /proc) and the wall time per 1,000
 * deliveries, for the writes in the uploads' transactions (4 events a transaction, as ~3.6 an
 * upload) and for the delivery side (claims and success records), alternated ROUNDS times.
 *
 * - `per delivery` is today's: the real `rhythmc_webhook_enqueue` (one row per webhook and event),
 *   the real claim (`rhythmc_webhook_claim`, 8 deliveries a claim: the default concurrency) and the
 *   real success record (`PgDeliveryStore.markDelivered`, one statement per claim's group).
 * - `per event` is a PROTOTYPE written here only (it is not the service's): one row per event in
 *   a table of its own with the webhooks' ids, claimed 3 events (9 deliveries) a claim, and
 *   recorded by inserting the delivered rows into `webhook_delivery` (the per-webhook log the
 *   console reads) and deleting the event rows, one statement per claim's group.
 * - `per event, no log` is the same prototype keeping no row of a success (the event row deleted
 *   only): the least bookkeeping one row per event can cost, and what the log rows cost beside it.
 *
 *   npm run bench:webhooks:outbox
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"), EVENTS
 * (8000), ROUNDS (2). Writes bench/.out/webhooks-outbox-shapes.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, PoolClient } from 'pg';
import { recreateDatabase } from '../harness/database';
import { benchDatabaseUrl, fmt, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { postgresCpu, postgresCpuSecondsSince } from '../harness/process';
import { PgDeliveryStore } from '../../src/webhooks/webhook-delivery-store';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_webhook_outbox');
const EVENTS = intFromEnv('EVENTS', 8_000);
const ROUNDS = intFromEnv('ROUNDS', 2);
const WEBHOOKS = 3;
const EVENTS_A_TRANSACTION = 4;
const EVENT_TYPE = 'chart.first_place';
const PAYLOAD = JSON.stringify({
  player: { uid: 1, username: 'bench' },
  chart: { levelId: 1, name: 'Chart 1' },
  acc: 99.5,
  previous: null,
});

type Shape = 'per delivery' | 'per event' | 'per event, no log';

/** The prototype's table: one row per event, its webhooks' ids, leased like today's rows. */
const PROTOTYPE_TABLE = `
  CREATE TABLE IF NOT EXISTS bench_webhook_event (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_type varchar(32) NOT NULL,
    payload jsonb NOT NULL,
    webhook_ids int[] NOT NULL,
    attempts int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX IF NOT EXISTS bench_webhook_event_due ON bench_webhook_event (next_attempt_at)`;

const PROTOTYPE_ENQUEUE = `
  INSERT INTO bench_webhook_event (event_type, payload, webhook_ids)
  SELECT $1, $2::jsonb, ids FROM (SELECT array_agg(w.id) AS ids FROM webhook w WHERE w.enabled AND $1 = ANY (w.events)) x
   WHERE ids IS NOT NULL`;

const PROTOTYPE_CLAIM = `
  WITH due AS (
    SELECT e.id FROM bench_webhook_event e WHERE e.next_attempt_at <= now()
     ORDER BY e.next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
  )
  UPDATE bench_webhook_event e SET attempts = e.attempts + 1, next_attempt_at = now() + interval '60 seconds'
    FROM due WHERE e.id = due.id
  RETURNING e.id, e.event_type, e.payload, e.webhook_ids, e.created_at`;

/** The lower bound: successes leave no row (no per-webhook log of them), the event row goes. */
const PROTOTYPE_RECORD_NO_LOG = `DELETE FROM bench_webhook_event e WHERE e.id = ANY ($1::uuid[])`;

const PROTOTYPE_RECORD = `
  WITH gone AS (DELETE FROM bench_webhook_event e WHERE e.id = ANY ($1::uuid[]) RETURNING e.*)
  INSERT INTO webhook_delivery (id, webhook_id, event_id, event_type, payload, state, attempts, next_attempt_at,
                                last_status, created_at, delivered_at)
  SELECT gen_random_uuid(), w, g.id, g.event_type, g.payload, 'delivered', g.attempts, g.next_attempt_at, 200,
         g.created_at, now()
    FROM gone g, unnest(g.webhook_ids) AS w`;

interface Phase {
  ms: number;
  postgresCpuMs: number;
}

async function timed(work: () => Promise<void>): Promise<Phase> {
  const cpu = postgresCpu();
  const started = performance.now();
  await work();
  return { ms: performance.now() - started, postgresCpuMs: postgresCpuSecondsSince(cpu) * 1000 };
}

/** The uploads' side: EVENTS events, EVENTS_A_TRANSACTION a transaction. */
async function enqueue(client: PoolClient, shape: Shape): Promise<void> {
  for (let i = 0; i < EVENTS; i += EVENTS_A_TRANSACTION) {
    await client.query('BEGIN');
    for (let j = 0; j < EVENTS_A_TRANSACTION; j++) {
      if (shape === 'per delivery') {
        await client.query('SELECT rhythmc_webhook_enqueue($1, gen_random_uuid(), $2::jsonb)', [EVENT_TYPE, PAYLOAD]);
      } else {
        await client.query(PROTOTYPE_ENQUEUE, [EVENT_TYPE, PAYLOAD]);
      }
    }
    await client.query('COMMIT');
  }
}

/** The delivery side: claim, then record every claimed delivery as delivered, until none is due. */
async function deliver(pool: Pool, shape: Shape): Promise<number> {
  let delivered = 0;
  if (shape === 'per delivery') {
    const store = new PgDeliveryStore(pool);
    for (;;) {
      const claimed = await store.claimDue(8, 60_000);
      if (claimed.length === 0) break;
      await store.markDelivered(claimed.map((delivery) => ({ id: delivery.id, status: 200 })));
      delivered += claimed.length;
    }
    return delivered;
  }
  for (;;) {
    const { rows } = await pool.query<{ id: string; webhook_ids: number[] }>(PROTOTYPE_CLAIM, [3]);
    if (rows.length === 0) break;
    await pool.query(shape === 'per event' ? PROTOTYPE_RECORD : PROTOTYPE_RECORD_NO_LOG, [rows.map((row) => row.id)]);
    delivered += rows.reduce((n, row) => n + row.webhook_ids.length, 0);
  }
  return delivered;
}

async function main(): Promise<void> {
  await recreateDatabase(DATABASE_URL);
  // One connection: the store's statements and the prototype's run on the same session.
  const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });
  const results: Array<{
    shape: Shape;
    round: number;
    enqueue: Phase;
    deliver: Phase;
    deliveries: number;
    load: number;
  }> = [];
  try {
    const setup = await pool.connect();
    try {
      await setup.query(PROTOTYPE_TABLE);
      for (let i = 1; i <= WEBHOOKS; i++) {
        await setup.query(
          `INSERT INTO webhook (name, url, events, secret, enabled) VALUES ($1, 'https://example.invalid/h', $2, 'bench-secret', true)`,
          [`bench ${i}`, [EVENT_TYPE]],
        );
      }
    } finally {
      setup.release();
    }
    console.log(`outbox shapes: ${EVENTS} events × ${WEBHOOKS} webhooks a round, ${ROUNDS} rounds each`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const shape of ['per delivery', 'per event', 'per event, no log'] as const) {
        const client = await pool.connect();
        let enqueued: Phase;
        try {
          await client.query('TRUNCATE webhook_delivery, bench_webhook_event');
          await client.query('VACUUM ANALYZE webhook_delivery');
          await client.query('VACUUM ANALYZE bench_webhook_event');
          enqueued = await timed(() => enqueue(client, shape));
        } finally {
          client.release();
        }
        let deliveries = 0;
        const delivering = await timed(async () => {
          deliveries = await deliver(pool, shape);
        });
        if (deliveries !== EVENTS * WEBHOOKS)
          throw new Error(`${shape}: ${deliveries} deliveries, expected ${EVENTS * WEBHOOKS}`);
        const per = (phase: Phase) =>
          `${fmt((phase.postgresCpuMs / deliveries) * 1000)} ms PostgreSQL CPU, ${fmt((phase.ms / deliveries) * 1000)} ms wall`;
        results.push({ shape, round, enqueue: enqueued, deliver: delivering, deliveries, load: loadAverage() });
        console.log(
          `round ${round} ${shape.padEnd(18)} per 1,000 deliveries: writes ${per(enqueued)}; claims and records ${per(delivering)} (load ${loadAverage().toFixed(2)})`,
        );
      }
    }
  } finally {
    await pool.end();
  }
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(
    join(OUT_DIR, 'webhooks-outbox-shapes.json'),
    JSON.stringify({ events: EVENTS, webhooks: WEBHOOKS, results }, null, 2),
  );
}

runMain(main);
