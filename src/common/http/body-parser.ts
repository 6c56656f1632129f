import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { json } from 'express';
import { jsonBodyProblem } from './json-body-check';

/** The error body of a request refused before Nest, its code kept for the log line and metrics (as the filter does). */
function refuse(res: Response, status: number, error: 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE', message: string): void {
  res.locals.errorCode = error;
  res.status(status).json({ error, message });
}

/** decisions.md §2: bodies over 256 KiB are refused with 413. */
export const MAX_BODY_BYTES = 256 * 1024;

/** express.json, then the rules every JSON body must meet (json-body-check.ts): 400 when one fails. */
export function jsonBodyParser(): RequestHandler {
  const parse = json({ limit: MAX_BODY_BYTES, strict: true });
  return (req, res, next) => {
    // No body at all (every GET of the plugin): nothing to parse (body-parser's own hasBody test).
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) {
      next();
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error !== undefined && error !== null) {
        next(error);
        return;
      }
      const problem = req.body === undefined ? null : jsonBodyProblem(req.body);
      if (problem !== null) {
        refuse(res, 400, 'BAD_REQUEST', problem);
        return;
      }
      next();
    });
  };
}

/** Turns body-parser failures into the error body (they happen before Nest's filter sees the request). */
export function bodyParserErrorHandler(error: unknown, req: Request, res: Response, next: NextFunction): void {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    refuse(res, 413, 'PAYLOAD_TOO_LARGE', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
    return;
  }
  if (type === 'entity.parse.failed') {
    refuse(res, 400, 'BAD_REQUEST', 'Malformed JSON body');
    return;
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    refuse(res, 400, 'BAD_REQUEST', 'Unsupported body encoding');
    return;
  }
  if (type === 'request.aborted' || type === 'request.size.invalid' || type === 'stream.encoding.set') {
    refuse(res, 400, 'BAD_REQUEST', 'Invalid request body');
    return;
  }
  // A body that does not inflate (Content-Encoding gzip/deflate/br over other bytes) is a zlib
  // error wrapped in a 400 without a type; any other 4xx of the parser is the caller's too.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const encoded = (req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
    refuse(res, 400, 'BAD_REQUEST', encoded ? 'The request body could not be decompressed' : 'Invalid request body');
    return;
  }
  next(error);
}
