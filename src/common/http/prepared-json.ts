import { hash } from 'node:crypto';
import type { Request, Response } from 'express';

/** A JSON answer serialised once: its bytes and a strong ETag over them. */
export interface PreparedJson {
  body: Buffer;
  etag: string;
}

export function prepareJson(value: unknown): PreparedJson {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return { body, etag: `"${hash('sha256', body, 'base64url').slice(0, 27)}"` };
}

/** Whether an `If-None-Match` header names the ETag (weak comparison, RFC 9110 §13.1.2). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/**
 * Sends prepared bytes: 200 with the ETag, or 304 without a body when `If-None-Match` names it.
 * `no-cache`: a client may keep the answer but asks again each time.
 */
export function sendPreparedJson(request: Request, response: Response, prepared: PreparedJson): void {
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Cache-Control', 'no-cache');
  response.setHeader('ETag', prepared.etag);
  if (matchesIfNoneMatch(request.headers['if-none-match'], prepared.etag)) {
    response.status(304).end();
    return;
  }
  response.status(200).end(prepared.body);
}
