import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { AddressPolicy, refusedAddress } from './webhook-address';

/** At most this much of a receiver's answer is read (kept for the log); the rest is cut off. */
export const RESPONSE_READ_LIMIT = 4_096;

/** How an attempt ended (the label of rhythmc_webhook_attempts_total). */
export type SendOutcome = 'delivered' | 'http_error' | 'redirect' | 'timeout' | 'connection' | 'refused';

export interface SendResult {
  /** The HTTP status, null when none came (refused address, connection error, timeout). */
  status: number | null;
  ok: boolean;
  outcome: SendOutcome;
  /** Why it failed, for the delivery log (never the URL: it may hold a token). */
  error: string | null;
}

class RefusedAddressError extends Error {}

/** An idle kept-alive connection is closed after this long (below Node's 5 s server default, so the receiver rarely closes it first). */
export const IDLE_SOCKET_MS = 4_000;

/**
 * Kept-alive connections for the delivery loop, one pool a protocol: consecutive deliveries to a
 * receiver reuse a connection (no TCP, and for https no TLS, handshake each). At most `sockets`
 * idle ones are kept, each closed after IDLE_SOCKET_MS idle. A connection is only ever opened
 * through guardedLookup, so a reused one goes to an address checked when it was opened; a
 * connection whose answer was cut off, timed out or failed is destroyed, never reused.
 */
export class DeliveryAgents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
  /** Set by destroy (the loop's stop): a connection reset from then on is ours, never tried again. */
  destroyed = false;

  constructor(sockets: number) {
    const options = { keepAlive: true, maxFreeSockets: sockets, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
    this.http = new HttpAgent(options);
    this.https = new HttpsAgent(options);
  }

  destroy(): void {
    this.destroyed = true;
    this.http.destroy();
    this.https.destroy();
  }
}

/**
 * At most `limit` tasks at once, the rest started in arrival order as earlier ones call `done`.
 * Each task must call `done` exactly once. A waiting task whose `abandoned` says true when its turn
 * comes is dropped, never started: a lookup for a delivery that already timed out does not take a
 * slot from the live ones.
 */
export class TaskGate {
  private running = 0;
  private readonly waiting: Array<{ task: (done: () => void) => void; abandoned?: () => boolean }> = [];

  constructor(private readonly limit: number) {}

  run(task: (done: () => void) => void, abandoned?: () => boolean): void {
    if (this.running >= this.limit) {
      this.waiting.push({ task, abandoned });
      return;
    }
    this.running++;
    let released = false;
    task(() => {
      if (released) return;
      released = true;
      this.running--;
      let next = this.waiting.shift();
      while (next?.abandoned?.()) next = this.waiting.shift();
      if (next) this.run(next.task, next.abandoned);
    });
  }

  /** Tasks started and not done, and tasks waiting (for tests). */
  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

/**
 * DNS lookups in flight at once in this thread. `dns.lookup` runs getaddrinfo on libuv's thread
 * pool (4 threads, shared with the main thread's password hashing, file and crypto work), and a
 * lookup cannot be cancelled: a receiver whose name server answers slowly would otherwise hold a
 * pool thread per attempt, past each attempt's timeout, and with retries all four. Two leaves the
 * other two to the rest of the process; kept-alive connections need no lookup.
 */
export const LOOKUPS_IN_FLIGHT = 2;
const LOOKUPS = new TaskGate(LOOKUPS_IN_FLIGHT);

/**
 * A lookup that refuses every answer holding an address the policy refuses: the socket connects
 * only to addresses checked here (no second resolution between the check and the connect).
 */
function guardedLookup(policy: AddressPolicy, abandoned: () => boolean): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      for (const entry of addresses) {
        const refused = refusedAddress(entry.address, policy);
        if (refused) return callback(new RefusedAddressError(refused), '', 0);
      }
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    };
    LOOKUPS.run(
      (done) =>
        dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
          done();
          answer(error, addresses);
        }),
      abandoned,
    );
  };
}

/**
 * POSTs one delivery. Never follows a redirect (a 3xx is a failure), reads at most
 * RESPONSE_READ_LIMIT bytes of the answer, and gives up after `timeoutMs` in all (connect, headers
 * and body together): a receiver that answers slowly or never stops costs this delivery only.
 * With `agents`, on a kept-alive connection (DeliveryAgents), kept only when the answer ended
 * within the limits; a reused connection that the receiver had closed already (a reset before any
 * answer) is tried once more on another, unless the reset is the agents' own destroy (a stop). Without,
 * on a connection of its own.
 */
export function sendDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  policy: AddressPolicy,
  timeoutMs: number,
  agents?: DeliveryAgents,
  retried = false,
): Promise<SendResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    /** `keep`: the answer ended within the limits, so its connection may serve the next delivery. */
    const finish = (result: SendResult, keep = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) request.destroy();
      resolve(result);
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ status: null, ok: false, outcome: 'connection', error: 'the URL is not valid' });
    }
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const refused = refusedAddress(host, policy);
      if (refused) return resolve({ status: null, ok: false, outcome: 'refused', error: `refused: ${refused}` });
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    let request: ClientRequest;
    try {
      // Throws at once for what it cannot send (a protocol other than http(s), a bad header): the
      // timer below is armed only for a request that exists.
      request = send(target, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        // A lookup still waiting for its turn when this attempt settled (timed out) is dropped.
        lookup: guardedLookup(policy, () => settled),
        agent: agents === undefined ? false : target.protocol === 'https:' ? agents.https : agents.http,
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'the request could not be made';
      return resolve({ status: null, ok: false, outcome: 'connection', error: `not sent: ${code}` });
    }
    const timer = setTimeout(
      () => finish({ status: null, ok: false, outcome: 'timeout', error: `no complete answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (
        !settled &&
        request.reusedSocket &&
        !retried &&
        agents?.destroyed !== true &&
        (error.code === 'ECONNRESET' || error.code === 'EPIPE')
      ) {
        settled = true;
        clearTimeout(timer);
        resolve(
          sendDelivery(url, headers, body, policy, Math.max(1, timeoutMs - (Date.now() - started)), agents, true),
        );
        return;
      }
      finish(
        error instanceof RefusedAddressError
          ? { status: null, ok: false, outcome: 'refused', error: `refused: ${error.message}` }
          : {
              status: null,
              ok: false,
              outcome: 'connection',
              error: `connection failed: ${error.message}`.slice(0, 200),
            },
      );
    });
    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > RESPONSE_READ_LIMIT) settle(false);
      });
      response.on('end', () => settle(true));
      response.on('error', () => settle(false));
      function settle(ended: boolean) {
        if (status >= 200 && status < 300) finish({ status, ok: true, outcome: 'delivered', error: null }, ended);
        else if (status >= 300 && status < 400)
          finish({ status, ok: false, outcome: 'redirect', error: `redirect (${status}) not followed` }, ended);
        else finish({ status, ok: false, outcome: 'http_error', error: `HTTP ${status}` }, ended);
      }
    });
    request.end(body);
  });
}
