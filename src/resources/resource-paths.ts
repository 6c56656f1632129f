/** Kinds of indexed files: `data/**` and `lang/**` make the manifest, `packs/*.zip` the pack manifest. */
export type ResourceKind = 'data' | 'lang' | 'pack';

/** Longest relative path the index keeps and a request may name (the column is varchar(1024)). */
export const MAX_RESOURCE_PATH_LENGTH = 1024;

// C0 controls and DEL: never in an indexed name, and NUL would make PostgreSQL reject the text.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * Why a requested relative path is refused, or null when its form is acceptable
 * (decisions.md §6: `..`, a leading `/`, a backslash or an empty path are 400).
 * Whether the path exists is the index's business, not this check's.
 */
export function resourcePathProblem(path: string): string | null {
  if (path.length === 0) return 'must not be empty';
  if (path.length > MAX_RESOURCE_PATH_LENGTH) return `must be at most ${MAX_RESOURCE_PATH_LENGTH} characters`;
  if (path.startsWith('/')) return 'must be relative (no leading "/")';
  if (path.includes('\\')) return 'must use "/" separators (no backslash)';
  if (path.split('/').includes('..')) return 'must not contain a ".." segment';
  if (CONTROL_CHARACTERS.test(path)) return 'must not contain control characters';
  return null;
}

/** The kind a relative path is indexed under, or null when the index does not cover it. */
export function resourceKindOf(path: string): ResourceKind | null {
  if (path.startsWith('data/')) return 'data';
  if (path.startsWith('lang/')) return 'lang';
  if (/^packs\/[^/]+\.zip$/i.test(path)) return 'pack';
  return null;
}

/** Percent-encodes each segment (RFC 3986) and keeps the `/` separators. */
export function encodeResourcePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
