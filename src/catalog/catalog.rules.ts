import { BadRequestError } from '../common/errors/app-error';
import { parseLocalDateTime } from '../common/time';
import { isJsonObject } from '../common/validation/json-object';

/**
 * Collection keys look like `namespace:category.id` (decisions.md §4): a lower-case namespace,
 * a category, then one or more dot-separated id segments (`rhythmc:assets.songs.12`).
 */
export const COLLECTION_KEY_PATTERN = /^[a-z0-9_-]+:[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;
export const COLLECTION_KEY_MAX_LENGTH = 128;
/** Unknown keys with this prefix are created as `asset` collections when a player unlocks them. */
export const ASSET_KEY_PREFIX = 'rhythmc:assets.';
export const ASSET_TYPE = 'asset';
/** The unlock rule stored on asset collections created by a sync. */
export const ASSET_UNLOCK_METHOD = { type: 'MANUAL' } as const;

const COLLECTION_TYPE_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** Types whose properties the client renders (interface.md "properties for title and tag"). */
const DECORATION_TYPES = new Set(['title', 'tag']);

export const MAX_BATCH_ENTRIES = 1000;
/** Problems spelled out in one 400 answer; the rest are counted. */
const MAX_LISTED_PROBLEMS = 20;

export const LEVEL_ID_MAX = 2_147_483_647;

export function isCollectionKey(value: unknown): value is string {
  return typeof value === 'string' && value.length <= COLLECTION_KEY_MAX_LENGTH && COLLECTION_KEY_PATTERN.test(value);
}

export function isAssetKey(key: string): boolean {
  return key.startsWith(ASSET_KEY_PREFIX);
}

export interface CollectionDefinition {
  key: string;
  type: string;
  unlockMethod: Record<string, unknown>;
  properties: Record<string, unknown>;
}

export interface ChartDefinition {
  levelId: number;
  name: string;
  difficultyConstant: number;
  version: string;
  active: boolean;
  /** Absent: a new chart gets the current time, an existing one keeps its own. */
  createdAt: Date | null;
  /** The note count the noteCount check compares a play's judged notes with; null: not checked. */
  notes: number | null;
}

function isNonEmptyString(value: unknown, maxLength: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= maxLength;
}

/** Collects `[index] field: problem` lines and throws them as one 400. */
class Problems {
  private readonly lines: string[] = [];

  add(index: number, field: string, problem: string): void {
    this.lines.push(`[${index}] ${field}: ${problem}`);
  }

  throwIfAny(): void {
    if (this.lines.length === 0) return;
    const listed = this.lines.slice(0, MAX_LISTED_PROBLEMS).join('; ');
    const more = this.lines.length - MAX_LISTED_PROBLEMS;
    throw new BadRequestError(more > 0 ? `${listed}; … and ${more} more` : listed);
  }
}

function batchEntries(body: unknown): unknown[] {
  if (!Array.isArray(body)) throw new BadRequestError('The request body must be a JSON array');
  if (body.length > MAX_BATCH_ENTRIES) throw new BadRequestError(`At most ${MAX_BATCH_ENTRIES} entries per request, got ${body.length}`);
  return body;
}

function checkUnknownFields(entry: Record<string, unknown>, allowed: readonly string[], index: number, problems: Problems): void {
  for (const field of Object.keys(entry)) {
    if (!allowed.includes(field)) problems.add(index, field, 'unknown field');
  }
}

const COLLECTION_FIELDS = ['key', 'type', 'unlockMethod', 'properties'] as const;

/** The title/tag properties the client renders; other properties are kept as given. */
function checkDecorationProperties(properties: Record<string, unknown>, index: number, problems: Problems): void {
  if (typeof properties.title !== 'string') problems.add(index, 'properties.title', 'must be a string');
  const description = properties.description;
  if (description !== undefined && typeof description !== 'string' && !(Array.isArray(description) && description.every((line) => typeof line === 'string'))) {
    problems.add(index, 'properties.description', 'must be a string or an array of strings');
  }
  if (properties.rarity !== undefined && typeof properties.rarity !== 'string') problems.add(index, 'properties.rarity', 'must be a string');
  if (properties.position !== undefined && typeof properties.position !== 'boolean') problems.add(index, 'properties.position', 'must be a boolean');
}

/**
 * Validates a PUT /admin/collections body as a whole: every problem of every entry is reported
 * (by index and field) and nothing is returned unless all entries are valid.
 */
export function parseCollectionBatch(body: unknown): CollectionDefinition[] {
  const entries = batchEntries(body);
  const problems = new Problems();
  const seen = new Map<string, number>();
  const result: CollectionDefinition[] = [];

  entries.forEach((entry, index) => {
    if (!isJsonObject(entry)) {
      problems.add(index, 'entry', 'must be a JSON object');
      return;
    }
    checkUnknownFields(entry, COLLECTION_FIELDS, index, problems);
    const { key, type, unlockMethod, properties } = entry;

    if (!isCollectionKey(key)) {
      problems.add(index, 'key', `must look like namespace:category.id (at most ${COLLECTION_KEY_MAX_LENGTH} characters)`);
    } else if (seen.has(key)) {
      problems.add(index, 'key', `duplicate of entry [${seen.get(key)}]`);
    } else {
      seen.set(key, index);
    }
    if (typeof type !== 'string' || !COLLECTION_TYPE_PATTERN.test(type)) {
      problems.add(index, 'type', 'must be a lower-case word of at most 32 characters (title, tag, …)');
    }
    if (!isJsonObject(unlockMethod)) {
      problems.add(index, 'unlockMethod', 'must be an object');
    } else if (!isNonEmptyString(unlockMethod.type, 64)) {
      problems.add(index, 'unlockMethod.type', 'must be a non-empty string');
    }
    if (!isJsonObject(properties)) {
      problems.add(index, 'properties', 'must be an object');
    } else if (typeof type === 'string' && DECORATION_TYPES.has(type)) {
      checkDecorationProperties(properties, index, problems);
    }

    if (isCollectionKey(key) && typeof type === 'string' && isJsonObject(unlockMethod) && isJsonObject(properties)) {
      result.push({ key, type, unlockMethod, properties });
    }
  });

  problems.throwIfAny();
  return result;
}

const CHART_FIELDS = ['levelId', 'name', 'difficultyConstant', 'version', 'active', 'createdAt', 'notes'] as const;

/** The largest note count a chart may declare. */
export const CHART_NOTES_MAX = 1_000_000;

/** Validates a PUT /admin/charts body as a whole, like parseCollectionBatch. */
export function parseChartBatch(body: unknown): ChartDefinition[] {
  const entries = batchEntries(body);
  const problems = new Problems();
  const seen = new Map<number, number>();
  const result: ChartDefinition[] = [];

  entries.forEach((entry, index) => {
    if (!isJsonObject(entry)) {
      problems.add(index, 'entry', 'must be a JSON object');
      return;
    }
    checkUnknownFields(entry, CHART_FIELDS, index, problems);
    const { levelId, name, difficultyConstant, version, active, createdAt, notes } = entry;
    let valid = true;
    const fail = (field: string, problem: string) => {
      problems.add(index, field, problem);
      valid = false;
    };

    if (typeof levelId !== 'number' || !Number.isInteger(levelId) || levelId < 0 || levelId > LEVEL_ID_MAX) {
      fail('levelId', `must be an integer from 0 to ${LEVEL_ID_MAX}`);
    } else if (seen.has(levelId)) {
      fail('levelId', `duplicate of entry [${seen.get(levelId)}]`);
    } else {
      seen.set(levelId, index);
    }
    if (!isNonEmptyString(name, 128)) fail('name', 'must be a non-empty string of at most 128 characters');
    if (typeof difficultyConstant !== 'number' || !Number.isFinite(difficultyConstant) || difficultyConstant < 0) {
      fail('difficultyConstant', 'must be a number of at least 0');
    }
    if (!isNonEmptyString(version, 64)) fail('version', 'must be a non-empty string of at most 64 characters');
    if (typeof active !== 'boolean') fail('active', 'must be a boolean');
    let created: Date | null = null;
    if (createdAt !== undefined) {
      created = typeof createdAt === 'string' ? parseLocalDateTime(createdAt) : null;
      if (!created) fail('createdAt', 'must be an ISO local date-time YYYY-MM-DDTHH:mm:ss');
    }

    if (notes !== undefined && notes !== null && (typeof notes !== 'number' || !Number.isInteger(notes) || notes < 1 || notes > CHART_NOTES_MAX)) {
      fail('notes', `must be an integer from 1 to ${CHART_NOTES_MAX}, or null`);
    }

    if (valid) {
      result.push({
        levelId: levelId as number,
        name: name as string,
        difficultyConstant: difficultyConstant as number,
        version: version as string,
        active: active as boolean,
        createdAt: created,
        notes: (notes as number | null | undefined) ?? null,
      });
    }
  });

  problems.throwIfAny();
  return result;
}

/** Name and version of the inactive row created for a level id an upload names but the catalog lacks. */
export function placeholderChart(levelId: number): Omit<ChartDefinition, 'createdAt'> {
  return { levelId, name: `Level ${levelId}`, difficultyConstant: 0, version: 'unknown', active: false, notes: null };
}
