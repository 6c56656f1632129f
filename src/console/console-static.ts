import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Response } from 'express';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { builtDirectory, pageSecurityHeaders } from '../common/http/built-pages';
import type { AppConfig } from '../config/app-config';

/** Where the console is served: the built files of console/ (vite, `npm run build`). */
export const CONSOLE_PATH = '/console';

/**
 * Only the console's own files: no inline script or style, no other origin, never framed. The
 * admin token is sent by fetch() to this origin only; form-action 'none' because every form is
 * handled by script.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/console beside the compiled service (dist/src/console → dist/console), also when run from the sources (ts-jest). */
export function consoleDirectory(): string {
  return builtDirectory('console');
}

const securityHeaders = pageSecurityHeaders(CONSOLE_CSP);

/**
 * Serves the web console at /console when the admin API is on (ADMIN_TOKEN set); without it the
 * path is not mounted and answers the normal 404 error body, like the admin API. The file names
 * under assets/ carry a content hash, so they are cached for a year; index.html is revalidated
 * every time, so a new build is picked up at the next load. Routing is in the hash (#/players),
 * so no fallback route is needed; an unknown file falls through to Nest's 404.
 */
export function mountConsole(
  app: NestExpressApplication,
  config: AppConfig,
  logger: LoggerService,
  directory = consoleDirectory(),
): void {
  if (config.adminToken === null) return;
  if (!existsSync(join(directory, 'index.html'))) {
    logger.warn(`No web console at ${directory} (run npm run build); ${CONSOLE_PATH} answers 404`);
    return;
  }
  app.use(CONSOLE_PATH, securityHeaders);
  app.useStaticAssets(directory, {
    prefix: CONSOLE_PATH,
    index: 'index.html',
    dotfiles: 'ignore',
    fallthrough: true,
    redirect: true,
    setHeaders: (response: Response, path: string) => {
      response.setHeader(
        'Cache-Control',
        basename(path) === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable',
      );
    },
  });
}
