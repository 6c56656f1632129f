import { boundedProblems, FieldProblem } from './field-problem';

/**
 * Errors that carry their wire code (decisions.md §2). Services throw these; the global
 * filter (and the WebSocket gateway) turn them into `{error, message, ...extra}`.
 */
export const ERROR_CODES = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'MAINTENANCE',
  'FORBIDDEN',
  'NOT_FOUND',
  'SESSION_CONFLICT',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UPGRADE_REQUIRED',
  'RANGE_NOT_SATISFIABLE',
  'RATE_LIMITED',
  'BANNED',
  'INTERNAL_ERROR',
  'UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra fields of the error body (e.g. toVersion/downUrl for 426, reason/until for 430). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * 400 BAD_REQUEST. `errors` lists the problems by field (FieldProblem); it is empty when the request
 * is wrong as a whole (malformed JSON, a body that is not an object). Every 400 body carries it.
 */
export class BadRequestError extends AppError {
  constructor(message: string, errors: readonly FieldProblem[] = []) {
    super(400, 'BAD_REQUEST', message, { errors: boundedProblems(errors) });
  }

  /**
   * A 400 about one field: `message` reads `<field> <problem>` (`until must be in the future`), or
   * `<field>: <problem>` with `label` (`groups: the name x is used twice`).
   */
  static field(field: string, problem: string, style: 'sentence' | 'label' = 'sentence'): BadRequestError {
    return new BadRequestError(style === 'label' ? `${field}: ${problem}` : `${field} ${problem}`, [
      { field, message: problem },
    ]);
  }

  /** The problems by field, as the body lists them. */
  get errors(): FieldProblem[] {
    return this.extra.errors as FieldProblem[];
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication failed') {
    super(401, 'UNAUTHORIZED', message);
  }
}

export class MaintenanceError extends AppError {
  constructor(message: string) {
    super(401, 'MAINTENANCE', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'Not permitted') {
    super(403, 'FORBIDDEN', message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super(404, 'NOT_FOUND', message);
  }
}

export class SessionConflictError extends AppError {
  constructor(message = 'The account already has an active session') {
    super(409, 'SESSION_CONFLICT', message);
  }
}

export class PayloadTooLargeError extends AppError {
  /** `subject`: what is too large ("Request body", "The frame"). */
  constructor(limitBytes: number, subject = 'Request body') {
    super(413, 'PAYLOAD_TOO_LARGE', `${subject} exceeds ${limitBytes} bytes`);
  }
}

export class UpgradeRequiredError extends AppError {
  constructor(message: string, toVersion: number, downUrl: string) {
    super(426, 'UPGRADE_REQUIRED', message, { toVersion, downUrl });
  }
}

/** 416 of the signed resource-file route, with the file size in Content-Range (RFC 9110 §15.5.17). */
export class RangeNotSatisfiableError extends AppError {
  constructor(message: string, size: number) {
    super(416, 'RANGE_NOT_SATISFIABLE', message, {}, { 'Content-Range': `bytes */${size}` });
  }
}

/** 409 CONFLICT: the change would break a rule about the state as stored (e.g. the last owner). */
export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, 'CONFLICT', message);
  }
}

/** 409 of an opt-in compare-and-set: the stored value is not the one the caller last saw. */
export class BalanceConflictError extends AppError {
  constructor(expected: number, stored: number) {
    super(409, 'CONFLICT', `The balance is ${stored}, not the expected ${expected}; nothing was changed`, {
      wattHour: stored,
    });
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      'RATE_LIMITED',
      `Too many requests; retry in ${retryAfterSeconds} s`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

export class BannedError extends AppError {
  constructor(reason: string, until: string) {
    super(430, 'BANNED', 'This account is banned', { reason, until });
  }
}

export class UnavailableError extends AppError {
  constructor(message: string, headers: Record<string, string> = {}) {
    super(503, 'UNAVAILABLE', message, {}, headers);
  }
}
