import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * How long a client may take to send a request's headers, and the whole request: node's defaults
 * (60 s and 300 s) let a client that declares a body and never sends it hold a connection for five
 * minutes; 256 KiB at the slowest link a game server or a browser plausibly has takes seconds.
 * Answered 408 by answerClientError. Node checks them every 30 s, so a timeout acts up to 30 s late.
 */
export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_TIMEOUT_MS = 60_000;

/** Sets the timeouts above on the app's HTTP server, with answerClientError for what node's parser refuses. */
export function guardClientErrors(server: Server): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.on('clientError', answerClientError);
}

/**
 * Requests node's HTTP parser refuses before the app sees them (a request target with raw
 * non-ASCII bytes, headers over 16 KiB, a malformed request line) get the error body of
 * decisions.md §2 instead of node's bare `400 Bad Request` without a body. Statuses without a code
 * of their own carry BAD_REQUEST, as in mapError, and like every BAD_REQUEST body an `errors` list
 * (empty: no field is at fault).
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request took too long to arrive']
        : [400, 'Bad Request', 'Malformed HTTP request'];
  const body = JSON.stringify({ error: 'BAD_REQUEST', message, errors: [] });
  // The answer to HEAD has no body (the client would read it as the start of another response).
  const head = error.rawPacket?.subarray(0, 5).toString('latin1').toUpperCase() === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
