import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Redis rank index's scripts live as .lua files in ./lua (read by a person, highlighted by an
 * editor), read once when this module loads. They sit beside this file in src/ (ts-jest, ts-node)
 * and in dist/src/ (nest-cli.json copies them as assets; the Docker image copies dist/).
 */
export const LUA_DIR = join(__dirname, 'lua');

/** The scripts of the index, by file name (without .lua). */
export const LUA_SCRIPTS = [
  'order-tree',
  'upsert',
  'sync-and-rank',
  'track-ranks',
  'load',
  'window',
  'bind',
  'next-generation',
] as const;

export type LuaScriptName = (typeof LUA_SCRIPTS)[number];

/** The text of ./lua/<name>.lua; every script ends with a line break, so they concatenate. */
export function luaScript(name: LuaScriptName): string {
  const text = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
  return text.endsWith('\n') ? text : `${text}\n`;
}
