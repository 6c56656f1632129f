import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { consoleDirectory } from '../../src/console/console-static';
import { siteDirectory } from '../../src/site/site-static';

/** Debian's chromium (.ci/run installs it with apt-get when it is missing); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ROOT = join(__dirname, '..', '..');

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Builds dist/<out> from the vite project <source>/ when it is missing or older than one of its sources. */
function ensureBuilt(source: string, out: string): void {
  const index = join(out, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestMtime(join(ROOT, source))) return;
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', `${source}/vite.config.mts`],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/** Builds dist/console (npm run build:console) when it is missing or older than a source of console/. */
export function ensureConsoleBuilt(): void {
  ensureBuilt('console', consoleDirectory());
}

/** Builds dist/site (npm run build:site) when it is missing or older than a source of site/. */
export function ensureSiteBuilt(): void {
  ensureBuilt('site', siteDirectory());
}

/** How long a launch may take before it counts as failed: well inside the suites' beforeAll budget. */
const LAUNCH_TIMEOUT_MS = 45_000;

/**
 * A headless Chromium. playwright-core gives every launch a fresh --user-data-dir of its own (and
 * refuses one in args). The background-networking flags matter on a closed network: without
 * them Chromium's own connections (updates, sync, QUIC probes) are refused and can stall it.
 * A missing or broken Chromium is one clear error naming CHROMIUM_PATH.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  try {
    return await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      timeout: LAUNCH_TIMEOUT_MS,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (error) {
    const cause = (error instanceof Error ? error.message : String(error)).split('\n').slice(0, 3).join('\n');
    throw new Error(
      `Chromium at ${CHROMIUM_PATH} did not start (apt-get install -y chromium, or set CHROMIUM_PATH): ${cause}`,
    );
  }
}

/** The budget of a console suite's beforeAll: the service and Chromium start together within it. */
export const BROWSER_SUITE_START_MS = 120_000;

/**
 * Starts a suite's service and Chromium together. When either fails, the other is closed before
 * the error is thrown: a suite left holding a started service it never received would keep its
 * database, timers and sockets open, and jest would never exit.
 */
export async function startWithChromium<T extends { close(): Promise<unknown> }>(
  start: () => Promise<T>,
): Promise<{ app: T; browser: Browser }> {
  const [app, browser] = await Promise.allSettled([start(), launchChromium()]);
  if (app.status === 'fulfilled' && browser.status === 'fulfilled') return { app: app.value, browser: browser.value };
  await Promise.allSettled([
    app.status === 'fulfilled' ? app.value.close() : null,
    browser.status === 'fulfilled' ? browser.value.close() : null,
  ]);
  throw browser.status === 'rejected' ? browser.reason : (app as PromiseRejectedResult).reason;
}
