import type { Response } from 'express';
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** A caller's id is kept only when it is a short plain token: it is written into log lines. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The request id: the caller's `X-Request-Id` when it is sane (a proxy's or the plugin's), else a new UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && ACCEPTED_REQUEST_ID.test(header) ? header : randomUUID();
}

/** Keeps the request's id on the response, for the lines logged about it (the exception filter's). */
export function setRequestId(response: Response, id: string): void {
  response.locals.requestId = id;
}

export function requestIdOf(response: Response): string | undefined {
  const id: unknown = response.locals.requestId;
  return typeof id === 'string' ? id : undefined;
}
