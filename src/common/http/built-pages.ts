import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { basename, join, resolve } from 'node:path';

/**
 * What the two pages the service serves from its build (the console and the leaderboard site)
 * share: where Vite put them, and the headers every one of their answers carries.
 */

/** dist/<name> beside the compiled service (dist/src/common/http → dist), also when run from the sources (ts-jest). */
export function builtDirectory(name: string): string {
  const base = resolve(__dirname, '..', '..', '..');
  return basename(base) === 'dist' ? join(base, name) : join(base, 'dist', name);
}

/** The page's CSP, no MIME sniffing, never framed, no referrer, isolated from other origins' windows and loads. */
export function pageSecurityHeaders(csp: string): RequestHandler {
  return (_request: Request, response: Response, next: NextFunction): void => {
    response.setHeader('Content-Security-Policy', csp);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('X-Frame-Options', 'DENY');
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    response.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    next();
  };
}
