import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

/**
 * One home per database function (docs/decisions.md "Database functions: one file each"): the
 * current text of every function of the schema is `src/<module>/sql/<name>.sql`, as
 * pg_get_functiondef() prints it, after a few `--` lines that say what it is. Migrations carry
 * their own copy of the text they create (history stays as it was); this compares the database a
 * run of every migration built with the files.
 */

export const SOURCE_ROOT = join(__dirname, '..', '..', 'src');

export interface FunctionFile {
  /** The function's name: the file's name without `.sql`. */
  name: string;
  /** The path from the repository root. */
  path: string;
  /** The text to compare: the file without its leading comment lines. */
  text: string;
}

/** The file's text as the database prints it: leading `--` and blank lines off, trailing `;` and space off. */
export function definitionText(file: string): string {
  const lines = file.split('\n');
  let first = 0;
  while (first < lines.length && (lines[first].startsWith('--') || lines[first].trim() === '')) first++;
  return lines.slice(first).join('\n').trimEnd().replace(/;$/, '').trimEnd();
}

/** Every `sql/<name>.sql` under src/. */
export function functionFiles(root = SOURCE_ROOT): FunctionFile[] {
  const files: FunctionFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.sql') && basename(dir) === 'sql')
        files.push({
          name: entry.name.slice(0, -'.sql'.length),
          path: relative(join(root, '..'), path),
          text: definitionText(readFileSync(path, 'utf8')),
        });
    }
  };
  walk(root);
  return files.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Every function of the public schema that no extension owns, with its text. A name with more
 * than one signature (an expand step of a rolling upgrade) has them all, one after the other in
 * the order of their argument types, separated by a line `;`.
 */
export const DATABASE_FUNCTIONS_SQL = `
  SELECT p.proname AS name, string_agg(rtrim(pg_get_functiondef(p.oid), E'\\n'), E'\\n;\\n' ORDER BY p.oid::regprocedure::text) AS text
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = 'public'
     AND NOT EXISTS (SELECT 1 FROM pg_depend d
                      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
   GROUP BY p.proname
   ORDER BY p.proname`;

export interface FunctionDrift {
  /** The database's text differs from the file's. */
  changed: string[];
  /** A function of the database without its file. */
  withoutFile: string[];
  /** A file without its function. */
  withoutFunction: string[];
  /** Two files of one name. */
  twoFiles: string[];
}

type Query = <T>(sql: string) => Promise<T[]>;

/** What differs between the database's functions and the files (all four lists empty: nothing). */
export async function functionDrift(query: Query, files = functionFiles()): Promise<FunctionDrift> {
  const database = new Map(
    (await query<{ name: string; text: string }>(DATABASE_FUNCTIONS_SQL)).map((row) => [row.name, row.text.trimEnd()]),
  );
  const byName = new Map<string, FunctionFile>();
  const drift: FunctionDrift = { changed: [], withoutFile: [], withoutFunction: [], twoFiles: [] };
  for (const file of files) {
    if (byName.has(file.name)) drift.twoFiles.push(file.name);
    byName.set(file.name, file);
    const text = database.get(file.name);
    if (text === undefined) drift.withoutFunction.push(file.path);
    else if (text !== file.text) drift.changed.push(file.path);
  }
  for (const name of database.keys()) if (!byName.has(name)) drift.withoutFile.push(name);
  return drift;
}
