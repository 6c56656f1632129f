import { isAssetKey, isCollectionKey, placeholderChart } from './catalog.rules';

describe('collection keys', () => {
  it.each(['rhythmc:title.star', 'rhythmc:assets.songs.12', 'my-ns:tag.Red_1', 'a:b.c'])('accepts %s', (key) => {
    expect(isCollectionKey(key)).toBe(true);
  });

  it.each([
    '',
    'rhythmc',
    'rhythmc:title',
    'rhythmc:.x',
    'rhythmc:title.',
    'Rhythmc:title.x',
    ':title.x',
    'rhythmc:title..x',
    'rhythmc:title.a b',
    'a:b:c.d',
    `rhythmc:title.${'x'.repeat(120)}`,
  ])('refuses %j', (key) => {
    expect(isCollectionKey(key)).toBe(false);
  });

  it('refuses non-strings', () => {
    expect(isCollectionKey(12)).toBe(false);
    expect(isCollectionKey(null)).toBe(false);
  });

  it('knows asset keys by their prefix', () => {
    expect(isAssetKey('rhythmc:assets.songs.1')).toBe(true);
    expect(isAssetKey('rhythmc:asset.songs.1')).toBe(false);
    expect(isAssetKey('other:assets.songs.1')).toBe(false);
  });
});

describe('placeholderChart', () => {
  it('describes the placeholder of an unknown level', () => {
    expect(placeholderChart(42)).toEqual({
      levelId: 42,
      name: 'Level 42',
      difficultyConstant: 0,
      version: 'unknown',
      active: false,
      notes: null,
    });
  });
});
