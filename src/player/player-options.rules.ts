import { MAX_JSON_KEYS } from '../common/http/json-body-check';

/** Option keys with their own storage; every other key is kept as sent in `extraOptions`. */
export const CORE_OPTION_KEYS: ReadonlySet<string> = new Set(['continueEnabled', 'sound', 'songSelectionState']);

/** The most unknown option keys a player keeps (the keys of one JSON object: MAX_JSON_KEYS). */
export const MAX_STORED_OPTION_KEYS = MAX_JSON_KEYS;

/** The most bytes the unknown option keys of a player take as JSON (every login and profile answer carries them). */
export const MAX_STORED_OPTION_BYTES = 64 * 1024;

/** The unknown option keys after a POST /player/options, or why they may not be stored. */
export type MergedOptions = { extra: Record<string, unknown> } | { refused: string };

/**
 * Merges the unknown keys of `sent` into `stored` (present keys replace, absent keys are kept).
 * The merged set is bounded (MAX_STORED_OPTION_KEYS keys, MAX_STORED_OPTION_BYTES of JSON): every
 * call may send 1,000 new keys, so without a bound the stored options, and with them every answer
 * that carries them, grew by each call. A merge over the bound is refused unless it is no larger
 * than what is stored (keys and bytes), so a player stored over it before the bound existed can
 * still change or shrink their options.
 */
export function mergeExtraOptions(stored: Record<string, unknown>, sent: Record<string, unknown>): MergedOptions {
  const extra = { ...stored };
  for (const [key, value] of Object.entries(sent)) {
    if (!CORE_OPTION_KEYS.has(key)) extra[key] = value;
  }
  const keys = Object.keys(extra).length;
  const bytes = Buffer.byteLength(JSON.stringify(extra), 'utf8');
  if (keys <= MAX_STORED_OPTION_KEYS && bytes <= MAX_STORED_OPTION_BYTES) return { extra };
  const storedKeys = Object.keys(stored).length;
  const storedBytes = Buffer.byteLength(JSON.stringify(stored), 'utf8');
  if (keys <= storedKeys && bytes <= storedBytes) return { extra };
  return {
    refused:
      keys > MAX_STORED_OPTION_KEYS
        ? `would keep ${keys} option keys; a player keeps at most ${MAX_STORED_OPTION_KEYS}`
        : `would keep ${bytes} bytes of options; a player keeps at most ${MAX_STORED_OPTION_BYTES}`,
  };
}
