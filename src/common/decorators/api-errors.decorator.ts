import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import type { ErrorCode } from '../errors/app-error';
import {
  BadRequestResponse,
  BannedResponse,
  ErrorResponse,
  FieldProblemResponse,
  UpgradeRequiredResponse,
} from '../errors/error.response';
import type { FieldProblem } from '../errors/field-problem';

/** Statuses a route can answer with the error body (decisions.md §2). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 416 | 426 | 429 | 430 | 500 | 503;

const BODY_BY_STATUS: Record<ErrorStatus, { code: ErrorCode; type: Type<ErrorResponse>; message: string }> = {
  400: { code: 'BAD_REQUEST', type: BadRequestResponse, message: 'Malformed JSON body' },
  401: { code: 'UNAUTHORIZED', type: ErrorResponse, message: 'Invalid or expired server access token' },
  403: { code: 'FORBIDDEN', type: ErrorResponse, message: 'Not permitted' },
  404: { code: 'NOT_FOUND', type: ErrorResponse, message: 'Not found' },
  409: { code: 'SESSION_CONFLICT', type: ErrorResponse, message: 'The account already has an active session' },
  413: { code: 'PAYLOAD_TOO_LARGE', type: ErrorResponse, message: 'Request body exceeds 262144 bytes' },
  416: {
    code: 'RANGE_NOT_SATISFIABLE',
    type: ErrorResponse,
    message: 'The range "bytes=9000-" is outside the 512 bytes of the file',
  },
  426: { code: 'UPGRADE_REQUIRED', type: UpgradeRequiredResponse, message: 'Plugin version 3 is below the minimum 5' },
  429: { code: 'RATE_LIMITED', type: ErrorResponse, message: 'Too many requests; retry in 12 s' },
  430: { code: 'BANNED', type: BannedResponse, message: 'This account is banned' },
  500: { code: 'INTERNAL_ERROR', type: ErrorResponse, message: 'Internal server error' },
  503: { code: 'UNAVAILABLE', type: ErrorResponse, message: 'The database cannot be reached' },
};

const EXTRA_EXAMPLE: Partial<Record<ErrorStatus, Record<string, unknown>>> = {
  426: { toVersion: 5, downUrl: 'https://example.org/rhythmc-5.jar' },
  430: { reason: 'cheating', until: '2026-04-01T12:00:00' },
};

/** What a route says about one error status: why it happens, and optionally the example's code and message. */
export type ErrorDoc =
  | string
  | {
      description: string;
      code?: ErrorCode;
      message?: string;
      /** The answer carries Retry-After: what its seconds mean. */
      retryAfter?: string;
      /** Other response headers the answer carries (OpenAPI header objects by name). */
      headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
    };

/** Every route that runs a query can fail like this; listed unless the route says otherwise. */
const COMMON: Partial<Record<ErrorStatus, ErrorDoc>> = {
  500: 'INTERNAL_ERROR: an unexpected failure (logged with its cause, never shown)',
  503: {
    description:
      'UNAVAILABLE: the database cannot be reached, is out of resources (disk space, memory, connections) or refuses writes',
    retryAfter: 'Seconds to wait before sending the call again',
  },
};

/**
 * Documents the error answers of a route with the shared `{error, message}` body. Keys are the
 * statuses the route can really answer (read from its guard, pipes and service); 500 and 503
 * are added for every route that reaches the database.
 */
export function ApiErrors(errors: Partial<Record<ErrorStatus, ErrorDoc>>, options: { database?: boolean } = {}) {
  const all: Partial<Record<ErrorStatus, ErrorDoc>> = { ...(options.database === false ? {} : COMMON), ...errors };
  const decorators = Object.entries(all).map(([key, doc]) => {
    const status = Number(key) as ErrorStatus;
    const known = BODY_BY_STATUS[status];
    const description = typeof doc === 'string' ? doc : doc.description;
    const retryAfter =
      status === 429 ? 'Seconds until the limit resets' : typeof doc === 'string' ? undefined : doc.retryAfter;
    const example = {
      error: (typeof doc === 'string' ? undefined : doc.code) ?? known.code,
      message: (typeof doc === 'string' ? undefined : doc.message) ?? known.message,
      ...EXTRA_EXAMPLE[status],
    };
    if (status === 400) Object.assign(example, { errors: exampleProblems(example.message) });
    const headers = {
      ...(typeof doc === 'string' ? {} : doc.headers),
      ...(retryAfter ? { 'Retry-After': { description: retryAfter, schema: { type: 'integer' } } } : {}),
    };
    return ApiResponse({
      status,
      description,
      type: known.type,
      example,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    });
  });
  return applyDecorators(
    ApiExtraModels(ErrorResponse, BadRequestResponse, FieldProblemResponse, UpgradeRequiredResponse, BannedResponse),
    ...decorators,
  );
}

/**
 * The `errors` of a documented 400 example, read from its message: each `; `-separated part that
 * starts with a field (`limit must be …`, `groups: …`, `[3].name must be …`, `[3] key: …`) is one
 * problem; a message about the request as a whole (`Malformed JSON body`) has none.
 */
function exampleProblems(message: string): FieldProblem[] {
  return message.split('; ').flatMap((part): FieldProblem[] => {
    const match = /^(?:\[(\d+)\][. ])?([a-z][\w.]*):? (.+)$/.exec(part);
    if (!match) return [];
    const [, index, field, problem] = match;
    return [{ ...(index === undefined ? {} : { index: Number(index) }), field, message: problem }];
  });
}
