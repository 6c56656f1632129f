import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
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

/**
 * A lookup that refuses every answer holding an address the policy refuses: the socket connects
 * only to addresses checked here (no second resolution between the check and the connect).
 */
function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      for (const entry of addresses) {
        const refused = refusedAddress(entry.address, policy);
        if (refused) return callback(new RefusedAddressError(refused), '', 0);
      }
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * POSTs one delivery. Never follows a redirect (a 3xx is a failure), reads at most
 * RESPONSE_READ_LIMIT bytes of the answer, and gives up after `timeoutMs` in all (connect, headers
 * and body together): a receiver that answers slowly or never stops costs this delivery only.
 */
export function sendDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  policy: AddressPolicy,
  timeoutMs: number,
): Promise<SendResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request?.destroy();
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
    const timer = setTimeout(
      () => finish({ status: null, ok: false, outcome: 'timeout', error: `no complete answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      lookup: guardedLookup(policy),
      agent: false,
    });
    request.on('error', (error) =>
      finish(
        error instanceof RefusedAddressError
          ? { status: null, ok: false, outcome: 'refused', error: `refused: ${error.message}` }
          : {
              status: null,
              ok: false,
              outcome: 'connection',
              error: `connection failed: ${error.message}`.slice(0, 200),
            },
      ),
    );
    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > RESPONSE_READ_LIMIT) settle();
      });
      response.on('end', settle);
      response.on('error', settle);
      function settle() {
        if (status >= 200 && status < 300) finish({ status, ok: true, outcome: 'delivered', error: null });
        else if (status >= 300 && status < 400)
          finish({ status, ok: false, outcome: 'redirect', error: `redirect (${status}) not followed` });
        else finish({ status, ok: false, outcome: 'http_error', error: `HTTP ${status}` });
      }
    });
    request.end(body);
  });
}
