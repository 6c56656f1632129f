import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { json } from 'express';
import { AppError, BadRequestError, PayloadTooLargeError } from '../errors/app-error';
import { mapError } from '../errors/error-body';
import { jsonBodyError, markCheckedJsonBody } from './json-body-check';

/**
 * Answers a request refused before Nest reaches it, through the same mapping as the exception
 * filter (its code kept for the log line and metrics, as the filter does).
 */
function refuse(res: Response, error: AppError): void {
  const mapped = mapError(error);
  res.locals.errorCode = mapped.body.error;
  res.status(mapped.status).json(mapped.body);
}

/** decisions.md §2: bodies over 256 KiB are refused with 413. */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * What a compressed body of MAX_BODY_BYTES or less can take on the wire: compression adds at most
 * a few bytes a block to data it cannot shrink (about 100 for 256 KiB of gzip), so a longer one
 * inflates to more than the limit.
 */
const MAX_ENCODED_BODY_BYTES = MAX_BODY_BYTES + 1024;

/**
 * Whether the declared Content-Length alone says the body is over the limit. body-parser refuses
 * such a body too, but only once it has read and dropped it all: a request declaring a gigabyte
 * and sending nothing held its connection until the server's request timeout.
 */
function declaredTooLarge(req: Request): boolean {
  const declared = req.headers['content-length'];
  if (declared === undefined || !/^\d{1,16}$/.test(declared)) return false;
  const encoding = req.headers['content-encoding'];
  const limit = encoding === undefined || encoding === 'identity' ? MAX_BODY_BYTES : MAX_ENCODED_BODY_BYTES;
  return Number(declared) > limit;
}

/**
 * The longest Content-Type a body may come with. The plugin sends `application/json` (with a
 * charset at most); body-parser's parse of a 15 KB hostile one (an unterminated quoted parameter)
 * took about 12 ms of the event loop per request, so a longer one is refused before it is parsed.
 */
export const MAX_CONTENT_TYPE_LENGTH = 256;

/** express.json, then the rules every JSON body must meet (json-body-check.ts): 400 when one fails. */
export function jsonBodyParser(): RequestHandler {
  const parse = json({ limit: MAX_BODY_BYTES, strict: true });
  return (req, res, next) => {
    // No body at all (every GET of the plugin): nothing to parse (body-parser's own hasBody test).
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) {
      next();
      return;
    }
    if ((req.headers['content-type']?.length ?? 0) > MAX_CONTENT_TYPE_LENGTH) {
      // Answered at once, the body not read (as below).
      res.setHeader('Connection', 'close');
      refuse(res, new BadRequestError(`Content-Type header too long (at most ${MAX_CONTENT_TYPE_LENGTH} characters)`));
      return;
    }
    if (declaredTooLarge(req)) {
      // Answered at once; the body is not read, so the connection cannot serve another request.
      res.setHeader('Connection', 'close');
      refuse(res, new PayloadTooLargeError(MAX_BODY_BYTES));
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error !== undefined && error !== null) {
        next(error);
        return;
      }
      const problem = req.body === undefined ? null : jsonBodyError(req.body);
      if (problem !== null) {
        refuse(res, problem);
        return;
      }
      markCheckedJsonBody(req.body);
      next();
    });
  };
}

/** Turns body-parser failures into the error body (they happen before Nest's filter sees the request). */
export function bodyParserErrorHandler(error: unknown, req: Request, res: Response, next: NextFunction): void {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    refuse(res, new PayloadTooLargeError(MAX_BODY_BYTES));
    return;
  }
  if (type === 'entity.parse.failed') {
    const scalar = jsonScalarKind((error as { body?: unknown }).body);
    refuse(
      res,
      new BadRequestError(
        scalar === null ? 'Malformed JSON body' : `The request body must be a JSON object or array, not ${scalar}`,
      ),
    );
    return;
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    refuse(res, new BadRequestError('Unsupported body encoding'));
    return;
  }
  if (type === 'request.aborted' || type === 'request.size.invalid' || type === 'stream.encoding.set') {
    refuse(res, new BadRequestError('Invalid request body'));
    return;
  }
  // A body that does not inflate (Content-Encoding gzip/deflate/br over other bytes) is a zlib
  // error wrapped in a 400 without a type; any other 4xx of the parser is the caller's too.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const encoded = (req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
    refuse(res, new BadRequestError(encoded ? 'The request body could not be decompressed' : 'Invalid request body'));
    return;
  }
  next(error);
}

/**
 * What a body refused by the parser's strict mode (only an object or an array) is, when it is JSON
 * all the same (`null`, `"text"`, `7`, `true`): "null", "a string", "a number", "a boolean"; null
 * when it is not JSON at all.
 */
function jsonScalarKind(raw: unknown): string | null {
  // An object or array that failed to parse is malformed; only the strict mode's refusals are parsed again.
  if (typeof raw !== 'string' || /^[\t\n\r ]*[[{]/.test(raw)) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (value === null) return 'null';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return null;
}
