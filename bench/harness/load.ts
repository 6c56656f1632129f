/**
 * The HTTP load driver of the benchmarks: keep-alive node:http over loopback (cheaper per
 * request than fetch, so the driver takes less of the machine), closed loop (N connections, each
 * sends when its previous answer arrived) or open loop (a fixed offered rate, so a slow answer
 * does not hide the requests that would have queued behind it). Latencies in ms.
 */
import { Agent, request } from 'node:http';

export const USER_AGENT = 'rhythmc-bench/1.0 node/20';

export interface LoadRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  /** JSON text. */
  body?: string;
}

export interface Answer {
  status: number;
  text: string;
}

/** One request; resolves with the status and body text (rejects only on a transport error). */
export function send(agent: Agent, baseUrl: string, req: LoadRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'User-Agent': USER_AGENT, ...req.headers };
    if (req.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(req.body);
    }
    const outgoing = request(new URL(req.path, baseUrl), { agent, method: req.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(latencies: number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

export interface LoadResult extends LatencySummary {
  requests: number;
  /** Answers whose status was not the expected one. */
  unexpected: number;
  /** Transport errors (refused, reset). */
  errors: number;
  seconds: number;
  rps: number;
}

export interface ClosedLoopOptions {
  baseUrl: string;
  connections: number;
  /** Stop after this long… */
  seconds?: number;
  /** …or after this many requests (whichever is given). */
  requests?: number;
  request: () => LoadRequest;
  expectStatus?: number;
}

/** `connections` keep-alive connections, each sending its next request when the previous answer arrived. */
export async function closedLoop(options: ClosedLoopOptions): Promise<LoadResult> {
  if (options.seconds === undefined && options.requests === undefined)
    throw new Error('closedLoop needs seconds or requests');
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const expected = options.expectStatus ?? 200;
  const latencies: number[] = [];
  let unexpected = 0;
  let errors = 0;
  let issued = 0;
  const started = process.hrtime.bigint();
  const deadline = options.seconds === undefined ? null : started + BigInt(Math.round(options.seconds * 1e9));
  const more = () =>
    (deadline === null || process.hrtime.bigint() < deadline) &&
    (options.requests === undefined || issued < options.requests);
  const worker = async () => {
    while (more()) {
      issued++;
      const next = options.request();
      const t0 = process.hrtime.bigint();
      try {
        const answer = await send(agent, options.baseUrl, next);
        if (answer.status !== expected) unexpected++;
      } catch {
        errors++;
      }
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return {
    ...summarize(latencies),
    requests: latencies.length,
    unexpected,
    errors,
    seconds,
    rps: latencies.length / seconds,
  };
}

export interface OpenLoopOptions {
  baseUrl: string;
  /** Offered requests per second. */
  rate: number;
  seconds: number;
  request: () => LoadRequest;
  expectStatus?: number;
  /** Requests in flight beyond which new ones are dropped (counted): the target cannot keep up. */
  maxInFlight?: number;
  maxSockets?: number;
}

export interface OpenLoopResult extends LoadResult {
  offered: number;
  dropped: number;
  /** Every answered request's latency (ms), in the order they finished: to pool several rounds. */
  latencies: number[];
}

/** Sends at a fixed rate whatever the answers do; latency of each request from its scheduled time. */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 });
  const expected = options.expectStatus ?? 200;
  const maxInFlight = options.maxInFlight ?? 1_000;
  const latencies: number[] = [];
  let unexpected = 0;
  let errors = 0;
  let dropped = 0;
  let inFlight = 0;
  let scheduled = 0;
  const pending = new Set<Promise<void>>();
  const startedMs = performance.now();
  const total = Math.round(options.rate * options.seconds);
  while (scheduled < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - startedMs) / 1000) * options.rate) + 1);
    for (; scheduled < due; scheduled++) {
      if (inFlight >= maxInFlight) {
        dropped++;
        continue;
      }
      const dueAt = startedMs + (scheduled / options.rate) * 1000;
      inFlight++;
      const done = send(agent, options.baseUrl, options.request()).then(
        (answer) => {
          if (answer.status !== expected) unexpected++;
        },
        () => {
          errors++;
        },
      );
      const tracked: Promise<void> = done.then(() => {
        latencies.push(performance.now() - dueAt);
        inFlight--;
        pending.delete(tracked);
      });
      pending.add(tracked);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(pending);
  const seconds = (performance.now() - startedMs) / 1000;
  agent.destroy();
  return {
    ...summarize(latencies),
    requests: latencies.length,
    unexpected,
    errors,
    seconds,
    rps: latencies.length / seconds,
    offered: options.rate,
    dropped,
    latencies,
  };
}

export const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
