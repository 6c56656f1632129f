import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let version: string | null = null;

/** The version in package.json (found upwards: src/config under ts-node, dist/src/config when built). */
export function packageVersion(): string {
  if (version !== null) return version;
  version = '0.0.0';
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
      break;
    }
  }
  return version;
}
