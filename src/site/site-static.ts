import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { builtDirectory, pageSecurityHeaders } from '../common/http/built-pages';
import type { AppConfig, SiteConfig } from '../config/app-config';

/**
 * The page's own files only: no inline script or style, no other origin, never framed. The page
 * reads the public API of this origin (connect-src 'self'), and holds no key (docs/decisions.md
 * "Leaderboard site"). Colours come from theme.css, a file of this origin, not inline.
 */
export const SITE_CSP = [
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

/** Hashed file names under assets/: kept for a year. index.html, theme.css and site.json: revalidated on every load. */
export const SITE_ASSET_CACHE = 'public, max-age=31536000, immutable';
export const SITE_PAGE_CACHE = 'no-cache';

/** dist/site beside the compiled service (dist/src/site → dist/site), also when run from the sources (ts-jest). */
export function siteDirectory(): string {
  return builtDirectory('site');
}

const securityHeaders = pageSecurityHeaders(SITE_CSP);

/** Relative luminance of a #rrggbb colour (WCAG 2), to pick readable text on it. */
function luminance(hex: string): number {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/**
 * The network's colours as CSS custom properties. The values were checked at boot to be #rrggbb
 * (src/config), so nothing else can reach the stylesheet.
 */
export function siteTheme(site: SiteConfig): string {
  // Below this luminance white text has more contrast than black (WCAG contrast ratio).
  const dark = luminance(site.backgroundColor) < 0.179;
  return [
    'html:root {',
    `  --accent: ${site.accentColor};`,
    `  --bg: ${site.backgroundColor};`,
    `  --fg: ${dark ? '#f2f2f7' : '#16161d'};`,
    `  --on-accent: ${luminance(site.accentColor) < 0.179 ? '#ffffff' : '#111111'};`,
    `  color-scheme: ${dark ? 'dark' : 'light'};`,
    '}',
    '',
  ].join('\n');
}

/**
 * Serves the public leaderboard site at SITE_PATH when SITE_ENABLED=true; otherwise the path is
 * not mounted and answers the normal 404 error body. Routing is in the hash (#/player/Notch), so
 * every page is index.html and no fallback route is needed. theme.css and site.json carry the
 * network's colours and name from the config; the built files are those of site/ (vite).
 */
export function mountSite(
  app: NestExpressApplication,
  config: AppConfig,
  logger: LoggerService,
  directory = siteDirectory(),
): void {
  const site = config.site;
  if (site === null) return;
  if (!existsSync(join(directory, 'index.html'))) {
    logger.warn(`No leaderboard site at ${directory} (run npm run build); ${site.path} answers 404`);
    return;
  }
  const theme = siteTheme(site);
  const settings = JSON.stringify({ name: site.name });
  app.use(site.path, securityHeaders);
  app.use(`${site.path}/theme.css`, (request: Request, response: Response, next: NextFunction) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.path !== '/') return next();
    response.setHeader('Cache-Control', SITE_PAGE_CACHE);
    response.type('text/css').send(theme);
  });
  app.use(`${site.path}/site.json`, (request: Request, response: Response, next: NextFunction) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.path !== '/') return next();
    response.setHeader('Cache-Control', SITE_PAGE_CACHE);
    response.type('application/json').send(settings);
  });
  app.useStaticAssets(directory, {
    prefix: site.path,
    index: 'index.html',
    dotfiles: 'ignore',
    fallthrough: true,
    redirect: true,
    setHeaders: (response: Response, path: string) => {
      response.setHeader('Cache-Control', basename(path) === 'index.html' ? SITE_PAGE_CACHE : SITE_ASSET_CACHE);
    },
  });
}
