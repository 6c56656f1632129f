import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { Pool } from 'pg';
import { parentPort, workerData } from 'node:worker_threads';
import { parseAllowedNetworks } from './webhook-address';
import { DeliveryLoop, DeliverySettings } from './webhook-delivery-loop';
import { PgDeliveryStore } from './webhook-delivery-store';
import type { SendOutcome } from './webhook-sender';

/**
 * The delivery worker thread (docs/decisions.md "Webhooks: deliveries off the request thread"):
 * the claim / send / record loop with a pg pool of its own, so that the ~hundreds of HTTP
 * requests, signatures and row updates a second of a busy outbox never run on the event loop that
 * answers uploads. Started and stopped by WebhookDispatcher, which it tells what it did.
 */
export interface DeliveryWorkerData {
  connectionString: string;
  /** The embedded PGlite: one connection (its one session serves every client in turn). */
  embedded: boolean;
  settings: DeliverySettings;
  allowedNetworks: readonly string[];
}

/** The main thread → the worker. */
export type ToDeliveryWorker = { type: 'stop'; waitMs: number } | { type: 'flush'; id: number };

/**
 * The worker → the main thread: counts since the last report (and the attempts in flight per
 * webhook now), a webhook to turn off, a warning, the end.
 */
export type FromDeliveryWorker =
  | {
      type: 'report';
      attempts: Partial<Record<SendOutcome, number>>;
      deliveredSeconds: number[];
      givenUp: number;
      inFlight: Array<[webhookId: number, attempts: number]>;
    }
  | { type: 'disable'; webhookId: number; reason: string }
  | { type: 'warn'; message: string }
  /** After the report that `flush` asked for (none when nothing happened since the last one). */
  | { type: 'flushed'; id: number }
  | { type: 'stopped' };

/** Counts are sent back in batches this often (one message, not one per delivery). */
const REPORT_EVERY_MS = 250;
/**
 * The thread's nice value: on a busy machine the thread that answers uploads gets the cores first
 * (a delivery has seconds; an upload's p99 is milliseconds). Linux only: setpriority on a thread id
 * changes that thread alone; elsewhere the call is skipped.
 */
const NICE = 10;

function lowerThreadPriority(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId !== process.pid) setPriority(threadId, NICE);
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

function run(port: NonNullable<typeof parentPort>, data: DeliveryWorkerData): void {
  lowerThreadPriority();
  const post = (message: FromDeliveryWorker) => port.postMessage(message);
  const pool = new Pool({
    connectionString: data.connectionString,
    // A claim, and a record per finished attempt: 4 keep up with ~400 deliveries a second on 2 cores.
    max: data.embedded ? 1 : Math.min(4, data.settings.concurrency),
    connectionTimeoutMillis: 10_000,
    query_timeout: 15_000,
    application_name: 'rhythmc-webhooks',
  });
  pool.on('error', (error) => post({ type: 'warn', message: `Webhook delivery connection failed: ${error.message}` }));
  let attempts: Partial<Record<SendOutcome, number>> = {};
  let deliveredSeconds: number[] = [];
  let givenUp = 0;
  /** The in-flight snapshot last sent: a report goes out when it changed, even with nothing counted. */
  let inFlightSent = '[]';
  const flush = () => {
    const inFlight = loop.inFlightByWebhook();
    const inFlightNow = JSON.stringify(inFlight);
    const counted = deliveredSeconds.length > 0 || givenUp > 0 || Object.keys(attempts).length > 0;
    if (!counted && inFlightNow === inFlightSent) return;
    post({ type: 'report', attempts, deliveredSeconds, givenUp, inFlight });
    inFlightSent = inFlightNow;
    attempts = {};
    deliveredSeconds = [];
    givenUp = 0;
  };
  const loop = new DeliveryLoop(
    new PgDeliveryStore(pool),
    data.settings,
    { allowed: parseAllowedNetworks(data.allowedNetworks) },
    {
      attempted: (outcome) => (attempts[outcome] = (attempts[outcome] ?? 0) + 1),
      delivered: (seconds) => deliveredSeconds.push(seconds),
      givenUp: () => givenUp++,
      failingTooLong: (webhookId, reason) => post({ type: 'disable', webhookId, reason }),
      warn: (message) => post({ type: 'warn', message }),
    },
  );
  loop.start();
  const reporter = setInterval(flush, REPORT_EVERY_MS);
  port.on('message', (message: ToDeliveryWorker) => {
    if (message.type === 'flush') {
      flush();
      post({ type: 'flushed', id: message.id });
      return;
    }
    void loop
      .stop(message.waitMs)
      .then(() => pool.end())
      .catch((error: unknown) => post({ type: 'warn', message: `Stopping webhook deliveries: ${String(error)}` }))
      .finally(() => {
        clearInterval(reporter);
        flush();
        post({ type: 'stopped' });
        port.close();
      });
  });
}

if (parentPort) run(parentPort, workerData as DeliveryWorkerData);
