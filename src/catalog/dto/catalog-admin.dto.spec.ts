import { BadRequestError } from '../../common/errors/app-error';
import { DtoArrayPipe } from '../../common/pipes/dto-array.pipe';
import { ChartDefinition, MAX_BATCH_ENTRIES, toChartDefinition } from '../catalog.rules';
import { ChartDefinitionDto, CollectionDefinitionDto } from './catalog-admin.dto';

/** The pipes of CatalogAdminController. */
const collections = new DtoArrayPipe(CollectionDefinitionDto, {
  maxItems: MAX_BATCH_ENTRIES,
  wording: 'label',
  unique: 'key',
});
const charts = new DtoArrayPipe(ChartDefinitionDto, {
  maxItems: MAX_BATCH_ENTRIES,
  wording: 'label',
  unique: 'levelId',
});

const parseCollectionBatch = (body: unknown): Promise<CollectionDefinitionDto[]> => collections.transform(body);
const parseChartBatch = async (body: unknown): Promise<ChartDefinition[]> =>
  (await charts.transform(body)).map(toChartDefinition);

const title = (key: string, properties: Record<string, unknown> = { title: '&6Star', position: true }) => ({
  key,
  type: 'title',
  unlockMethod: { type: 'MANUAL' },
  properties,
});

async function message(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as BadRequestError).message;
  }
  throw new Error('expected a BadRequestError');
}

describe('PUT /admin/collections entries (CollectionDefinitionDto through DtoArrayPipe)', () => {
  it('returns the definitions as given, unlock rule and extra properties included', async () => {
    const rule = {
      type: 'ACHIEVEMENT',
      name: 'First clear',
      mode: 'ALL',
      events: ['CLEAR'],
      player: { level: { operator: 'EQUALS', value: 3 } },
      defaultUnlocked: false,
      custom: { nested: [1, 2] },
    };
    const tag = {
      key: 'rhythmc:tag.red',
      type: 'tag',
      unlockMethod: rule,
      properties: { title: 'R', description: ['a', 'b'], rarity: 'RARE', position: false, color: 'red' },
    };
    expect(await parseCollectionBatch([tag, title('rhythmc:title.star')])).toEqual([tag, title('rhythmc:title.star')]);
  });

  it('does not check properties of other types', async () => {
    expect(
      await parseCollectionBatch([
        { key: 'rhythmc:arena.one', type: 'arena', unlockMethod: { type: 'MANUAL' }, properties: { title: 5 } },
      ]),
    ).toHaveLength(1);
  });

  it('accepts an empty batch', async () => {
    expect(await parseCollectionBatch([])).toEqual([]);
  });

  it('refuses a body that is not an array, and too many entries', async () => {
    expect(await message(() => parseCollectionBatch({}))).toBe('The request body must be a JSON array');
    expect(await message(() => parseCollectionBatch(Array.from({ length: 1001 }, (_, i) => title(`a:b.${i}`))))).toBe(
      'At most 1000 entries per request, got 1001',
    );
  });

  it('names every bad entry by index and field', async () => {
    const text = await message(() =>
      parseCollectionBatch([
        title('rhythmc:title.ok'),
        'nope',
        { key: 'bad key', type: 'Title!', unlockMethod: { name: 'x' }, properties: [] },
        {
          key: 'rhythmc:title.x',
          type: 'title',
          unlockMethod: [],
          properties: { title: 1, description: [1], rarity: 2, position: 'yes' },
          extra: 1,
        },
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

  it('requires a title for title and tag collections but not the later fields', async () => {
    expect(await message(() => parseCollectionBatch([title('rhythmc:tag.x', { position: true })]))).toBe(
      '[0] properties.title: must be a string',
    );
    expect(await parseCollectionBatch([title('rhythmc:title.old', { title: 'Old' })])).toHaveLength(1);
  });

  it('counts problems beyond the first 20', async () => {
    const text = await message(() => parseCollectionBatch(Array.from({ length: 25 }, () => 'x')));
    expect(text.endsWith('; … and 5 more')).toBe(true);
  });
});

describe('PUT /admin/charts entries (ChartDefinitionDto through DtoArrayPipe)', () => {
  const chart = { levelId: 7, name: 'Seven', difficultyConstant: 12.7, version: '1.2', active: true };

  it('parses charts, createdAt as a local date-time', async () => {
    expect(
      await parseChartBatch([chart, { ...chart, levelId: 0, active: false, createdAt: '2026-03-16T10:20:30' }]),
    ).toEqual([
      { ...chart, createdAt: null, notes: null },
      { ...chart, levelId: 0, active: false, createdAt: new Date(2026, 2, 16, 10, 20, 30), notes: null },
    ]);
    expect(
      await parseChartBatch([
        { ...chart, notes: 812 },
        { ...chart, levelId: 8, notes: null },
      ]),
    ).toEqual([
      { ...chart, createdAt: null, notes: 812 },
      { ...chart, levelId: 8, createdAt: null, notes: null },
    ]);
  });

  it('takes a constant from 0 to 1000 (DIFFICULTY_CONSTANT_MAX) and refuses one beyond', async () => {
    for (const difficultyConstant of [0, 14.2, 1000])
      expect((await parseChartBatch([{ ...chart, difficultyConstant }]))[0].difficultyConstant).toBe(
        difficultyConstant,
      );
    for (const difficultyConstant of [1000.0001, 1e6, -1e-9, '12', null]) {
      expect(await message(() => parseChartBatch([{ ...chart, difficultyConstant }]))).toBe(
        '[0] difficultyConstant: must be a number from 0 to 1000',
      );
    }
  });

  it('refuses a note count that is not an integer from 1 to 1000000', async () => {
    for (const notes of [0, 1.5, '812', 1_000_001]) {
      expect(await message(() => parseChartBatch([{ ...chart, notes }]))).toBe(
        '[0] notes: must be an integer from 1 to 1000000, or null',
      );
    }
  });

  it('names every bad entry by index and field', async () => {
    const text = await message(() =>
      parseChartBatch([
        {
          levelId: -1,
          name: '',
          difficultyConstant: -0.5,
          version: '',
          active: 'yes',
          createdAt: '2026-02-30T00:00:00',
          icon: 'x',
        },
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
        '[0] difficultyConstant: must be a number from 0 to 1000',
        '[0] version: must be a non-empty string of at most 64 characters',
        '[0] active: must be a boolean',
        '[0] createdAt: must be an ISO local date-time YYYY-MM-DDTHH:mm:ss',
        '[1] levelId: must be an integer from 0 to 2147483647',
        '[1] difficultyConstant: must be a number from 0 to 1000',
        '[3] levelId: duplicate of entry [2]',
        '[3] createdAt: must be an ISO local date-time YYYY-MM-DDTHH:mm:ss',
        '[4] entry: must be a JSON object',
      ].join('; '),
    );
  });

  it('counts name and version like their varchar columns (code points)', async () => {
    expect(await parseChartBatch([{ ...chart, name: '😀'.repeat(128), version: '😀'.repeat(64) }])).toHaveLength(1);
    expect(
      await message(() => parseChartBatch([{ ...chart, name: 'a\uFE0F'.repeat(65), version: 'a\uFE0F'.repeat(33) }])),
    ).toBe(
      '[0] name: must be a non-empty string of at most 128 characters; [0] version: must be a non-empty string of at most 64 characters',
    );
  });

  it('lists a duplicate where its field stands, after unknown fields and before later fields', async () => {
    expect(await message(() => parseChartBatch([chart, { ...chart, extra: 1, name: '' }]))).toBe(
      '[1] extra: unknown field; [1] levelId: duplicate of entry [0]; [1] name: must be a non-empty string of at most 128 characters',
    );
  });
});
