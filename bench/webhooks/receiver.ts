/**
 * The webhook receiver of bench/webhooks/run.ts, in a process of its own (PORT): it answers every
 * delivery 200 and keeps, per delivery, its type, its bench phase and its arrival minus the
 * event's createdAt. The bench reads them back at the end (GET /_bench/report) and moves the phase
 * (POST /_bench/phase/<name>). Requests to /slow (a slow receiver beside the others) are answered
 * after SLOW_MS and only counted.
 *
 * Why a process of its own: a real receiver (Discord, a network's bot) is on another machine. In
 * the bench's process its ~400 requests a second ran on the event loop that also times the
 * uploads, so the uploads' measured latency included the receiver's work. The bench also lowers
 * this process's priority (RECEIVER_NICE, default 19): on two shared cores it then takes only the
 * CPU the service and the load generator leave, the nearest this machine comes to "elsewhere".
 */
import { createServer } from 'node:http';

interface Delivery {
  type: string;
  phase: string;
  latencyMs: number;
}

const deliveries: Delivery[] = [];
const ids = new Set<string>();
let duplicates = 0;
let phase = 'rounds';
/** Requests to /slow: answered after SLOW_MS (the bench's SLOW_RECEIVER_SECONDS), not recorded as deliveries. */
const SLOW_MS = Number(process.env.SLOW_MS ?? 30_000);
let slowArrivals = 0;

const server = createServer((request, response) => {
  const url = request.url ?? '';
  if (request.method === 'GET' && url === '/ready') {
    response.end('ok');
    return;
  }
  if (request.method === 'GET' && url === '/_bench/report') {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ deliveries, duplicates, slowArrivals }));
    return;
  }
  if (request.method === 'POST' && url.startsWith('/_bench/phase/')) {
    phase = url.slice('/_bench/phase/'.length);
    response.end('ok');
    return;
  }
  if (url.startsWith('/slow')) {
    slowArrivals++;
    request.resume();
    const timer = setTimeout(() => response.end('late'), SLOW_MS);
    response.on('close', () => clearTimeout(timer));
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const id = String(request.headers['x-rhythmc-delivery']);
    const type = String(request.headers['x-rhythmc-event']);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as {
      createdAt?: string;
      embeds?: Array<{ timestamp: string }>;
    };
    if (ids.has(id)) duplicates++;
    ids.add(id);
    const createdAt = body.createdAt ?? body.embeds?.[0]?.timestamp ?? '';
    deliveries.push({ type, phase, latencyMs: Date.now() - Date.parse(createdAt) });
    response.end('ok');
  });
});

server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
