import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { consoleDirectory } from '../../src/console/console-static';

/** Debian's chromium (.ci/run installs it with apt-get when it is missing); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ROOT = join(__dirname, '..', '..');

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Builds dist/console (npm run build:console) when it is missing or older than a source of console/. */
export function ensureConsoleBuilt(): void {
  const index = join(consoleDirectory(), 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestMtime(join(ROOT, 'console'))) return;
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'console/vite.config.mts'],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/**
 * A headless Chromium. playwright-core gives every launch a fresh --user-data-dir of its own (and
 * refuses one in args). The background-networking flags matter on a closed network: without
 * them Chromium's own connections (updates, sync, QUIC probes) are refused and can stall it.
 */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
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
}
