import { BadRequestError } from '../common/errors/app-error';
import { isAssetKey, isCollectionKey, parseChartBatch, parseCollectionBatch, placeholderChart } from './catalog.rules';

const title = (key: string, properties: Record<string, unknown> = { title: '&6Star', position: true }) => ({
  key,
  type: 'title',
  unlockMethod: { type: 'MANUAL' },
  properties,
});

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as BadRequestError).message;
  }
  throw new Error('expected a BadRequestError');
}

describe('collection keys', () => {
  it.each(['rhythmc:title.star', 'rhythmc:assets.songs.12', 'my-ns:tag.Red_1', 'a:b.c'])('accepts %s', (key) => {
    expect(isCollectionKey(key)).toBe(true);
  });

  it.each(['', 'rhythmc', 'rhythmc:title', 'rhythmc:.x', 'rhythmc:title.', 'Rhythmc:title.x', ':title.x', 'rhythmc:title..x', 'rhythmc:title.a b', 'a:b:c.d', `rhythmc:title.${'x'.repeat(120)}`])(
    'refuses %j',
    (key) => {
      expect(isCollectionKey(key)).toBe(false);
    },
  );

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

describe('parseCollectionBatch', () => {
  it('returns the definitions as given, unlock rule and extra properties included', () => {
    const rule = {
      type: 'ACHIEVEMENT',
      name: 'First clear',
      mode: 'ALL',
      events: ['CLEAR'],
      player: { level: { operator: 'EQUALS', value: 3 } },
      defaultUnlocked: false,
      custom: { nested: [1, 2] },
    };
    const tag = { key: 'rhythmc:tag.red', type: 'tag', unlockMethod: rule, properties: { title: 'R', description: ['a', 'b'], rarity: 'RARE', position: false, color: 'red' } };
    expect(parseCollectionBatch([tag, title('rhythmc:title.star')])).toEqual([tag, title('rhythmc:title.star')]);
  });

  it('does not check properties of other types', () => {
    expect(parseCollectionBatch([{ key: 'rhythmc:arena.one', type: 'arena', unlockMethod: { type: 'MANUAL' }, properties: { title: 5 } }])).toHaveLength(1);
  });

  it('accepts an empty batch', () => {
    expect(parseCollectionBatch([])).toEqual([]);
  });

  it('refuses a body that is not an array, and too many entries', () => {
    expect(message(() => parseCollectionBatch({}))).toBe('The request body must be a JSON array');
    expect(message(() => parseCollectionBatch(Array.from({ length: 1001 }, (_, i) => title(`a:b.${i}`))))).toBe('At most 1000 entries per request, got 1001');
  });

  it('names every bad entry by index and field', () => {
    const text = message(() =>
      parseCollectionBatch([
        title('rhythmc:title.ok'),
        'nope',
        { key: 'bad key', type: 'Title!', unlockMethod: { name: 'x' }, properties: [] },
        { key: 'rhythmc:title.x', type: 'title', unlockMethod: [], properties: { title: 1, description: [1], rarity: 2, position: 'yes' }, extra: 1 },
        title('rhythmc:title.ok'),
      ]),
    );
    expect(text).toBe(
      [
        '[1] entry: must be a JSON object',
        '[2] key: must look like namespace:category.id (at most 128 characters)',
        '[2] type: must be a lower-case word of at most 32 characters (title, tag, …)',
        '[2] unlockMethod.type: must be a non-empty string',
        '[2] properties: must be an object',
        '[3] extra: unknown field',
        '[3] unlockMethod: must be an object',
        '[3] properties.title: must be a string',
        '[3] properties.description: must be a string or an array of strings',
        '[3] properties.rarity: must be a string',
        '[3] properties.position: must be a boolean',
        '[4] key: duplicate of entry [0]',
      ].join('; '),
    );
  });

  it('requires a title for title and tag collections but not the later fields', () => {
    expect(message(() => parseCollectionBatch([title('rhythmc:tag.x', { position: true })]))).toBe('[0] properties.title: must be a string');
    expect(parseCollectionBatch([title('rhythmc:title.old', { title: 'Old' })])).toHaveLength(1);
  });

  it('counts problems beyond the first 20', () => {
    const text = message(() => parseCollectionBatch(Array.from({ length: 25 }, () => 'x')));
    expect(text.endsWith('; … and 5 more')).toBe(true);
  });
});

describe('parseChartBatch', () => {
  const chart = { levelId: 7, name: 'Seven', difficultyConstant: 12.7, version: '1.2', active: true };

  it('parses charts, createdAt as a local date-time', () => {
    expect(parseChartBatch([chart, { ...chart, levelId: 0, active: false, createdAt: '2026-03-16T10:20:30' }])).toEqual([
      { ...chart, createdAt: null, notes: null },
      { ...chart, levelId: 0, active: false, createdAt: new Date(2026, 2, 16, 10, 20, 30), notes: null },
    ]);
    expect(parseChartBatch([{ ...chart, notes: 812 }, { ...chart, levelId: 8, notes: null }])).toEqual([
      { ...chart, createdAt: null, notes: 812 },
      { ...chart, levelId: 8, createdAt: null, notes: null },
    ]);
  });

  it('refuses a note count that is not an integer from 1 to 1000000', () => {
    for (const notes of [0, 1.5, '812', 1_000_001]) {
      expect(message(() => parseChartBatch([{ ...chart, notes }]))).toBe('[0] notes: must be an integer from 1 to 1000000, or null');
    }
  });

  it('names every bad entry by index and field', () => {
    const text = message(() =>
      parseChartBatch([
        { levelId: -1, name: '', difficultyConstant: -0.5, version: '', active: 'yes', createdAt: '2026-02-30T00:00:00', icon: 'x' },
        { ...chart, levelId: 1.5, difficultyConstant: '3' },
        chart,
        { ...chart, createdAt: 5 },
        [],
      ]),
    );
    expect(text).toBe(
      [
        '[0] icon: unknown field',
        '[0] levelId: must be an integer from 0 to 2147483647',
        '[0] name: must be a non-empty string of at most 128 characters',
        '[0] difficultyConstant: must be a number of at least 0',
        '[0] version: must be a non-empty string of at most 64 characters',
        '[0] active: must be a boolean',
        '[0] createdAt: must be an ISO local date-time YYYY-MM-DDTHH:mm:ss',
        '[1] levelId: must be an integer from 0 to 2147483647',
        '[1] difficultyConstant: must be a number of at least 0',
        '[3] levelId: duplicate of entry [2]',
        '[3] createdAt: must be an ISO local date-time YYYY-MM-DDTHH:mm:ss',
        '[4] entry: must be a JSON object',
      ].join('; '),
    );
  });

  it('describes the placeholder of an unknown level', () => {
    expect(placeholderChart(42)).toEqual({ levelId: 42, name: 'Level 42', difficultyConstant: 0, version: 'unknown', active: false, notes: null });
  });
});
