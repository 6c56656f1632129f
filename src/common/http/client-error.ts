import type { Duplex } from 'node:stream';

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
