import { MAX_STORED_OPTION_BYTES, MAX_STORED_OPTION_KEYS, mergeExtraOptions } from './player-options.rules';

const keys = (count: number, prefix = 'k', value: unknown = 1) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, value]));

describe('mergeExtraOptions', () => {
  it('replaces present keys, keeps absent ones and leaves the core keys out', () => {
    expect(mergeExtraOptions({ a: 1, b: 2 }, { b: 3, c: 4, sound: {}, continueEnabled: true })).toEqual({
      extra: { a: 1, b: 3, c: 4 },
    });
  });

  it('keeps exactly the most keys, and refuses one more', () => {
    const stored = keys(MAX_STORED_OPTION_KEYS - 1);
    expect(mergeExtraOptions(stored, { last: 1 })).toEqual({ extra: { ...stored, last: 1 } });
    expect(mergeExtraOptions({ ...stored, last: 1 }, { oneMore: 1 })).toEqual({
      refused: `would keep ${MAX_STORED_OPTION_KEYS + 1} option keys; a player keeps at most ${MAX_STORED_OPTION_KEYS}`,
    });
  });

  it('refuses a merge over the bytes, counted as JSON in UTF-8', () => {
    // 40 keys of 1,700 two-byte characters: about 136 KiB, over 64 KiB.
    const sent = keys(40, 'big', 'é'.repeat(1_700));
    const merged = mergeExtraOptions({}, sent);
    const bytes = Buffer.byteLength(JSON.stringify(sent), 'utf8');
    expect(bytes).toBeGreaterThan(MAX_STORED_OPTION_BYTES);
    expect(merged).toEqual({
      refused: `would keep ${bytes} bytes of options; a player keeps at most ${MAX_STORED_OPTION_BYTES}`,
    });
    expect(mergeExtraOptions({}, keys(10, 'big', 'é'.repeat(1_700)))).toEqual({
      extra: keys(10, 'big', 'é'.repeat(1_700)),
    });
  });

  it('lets options stored over the bound be changed or shrunk, never grown', () => {
    const stored = keys(MAX_STORED_OPTION_KEYS + 5, 'old', 'xx');
    expect(mergeExtraOptions(stored, { old0: 'y' })).toEqual({ extra: { ...stored, old0: 'y' } });
    expect('refused' in mergeExtraOptions(stored, { old0: 'xxx' })).toBe(true);
    expect('refused' in mergeExtraOptions(stored, { fresh: 1 })).toBe(true);
  });
});
