import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageVersion } from './package-version';

export interface BuildInfo {
  version: string;
  /** The git commit of the build: dist/build-info.json (scripts/build-info.js), SOURCE_COMMIT, git, or "unknown". */
  commit: string;
  node: string;
}

let cached: BuildInfo | null = null;

function commitOf(): string {
  // dist/src/config → dist/build-info.json, written by `npm run build`.
  const file = join(__dirname, '..', '..', 'build-info.json');
  if (existsSync(file)) {
    const commit = (JSON.parse(readFileSync(file, 'utf8')) as { commit?: unknown }).commit;
    if (typeof commit === 'string' && commit !== '') return commit;
  }
  if (process.env.SOURCE_COMMIT) return process.env.SOURCE_COMMIT;
  try {
    // Running from the sources (ts-node, tests): the checkout's commit.
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

/** What this process runs: package version, commit and Node.js version (read once). */
export function buildInfo(): BuildInfo {
  cached ??= { version: packageVersion(), commit: commitOf(), node: process.version };
  return cached;
}
