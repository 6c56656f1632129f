import { parseLocalDateTime } from '../common/time';

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
/**
 * The most collections one player may hold through POST /player/collections (titles, tags and
 * assets together): every login lists them all, and each unknown asset key of a sync is a new
 * catalog row. A sync that would pass it is 400 and writes nothing (docs/decisions.md
 * "Catalog and economy"). Far above what a network unlocks for one player.
 */
export const MAX_PLAYER_COLLECTIONS = 10_000;

export const COLLECTION_TYPE_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** Types whose properties the client renders (interface.md "properties for title and tag"). */
const DECORATION_TYPES = new Set(['title', 'tag']);

export function isDecorationType(type: string): boolean {
  return DECORATION_TYPES.has(type);
}

/** Entries of one PUT /admin/charts or /admin/collections. */
export const MAX_BATCH_ENTRIES = 1000;

/** The largest note count a chart may declare. */
export const CHART_NOTES_MAX = 1_000_000;

export const LEVEL_ID_MAX = 2_147_483_647;

/**
 * The largest chart constant (decisions.md "Charts"). A play's rating is at most the constant + 2,
 * so a player's ATP is too: 1000 keeps it far inside `numeric(10,4)` (the ATP columns) and the
 * daily history's ten-thousandths in `integer` (214,748.3647), and far above any real chart.
 */
export const DIFFICULTY_CONSTANT_MAX = 1000;

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

/** One PUT /admin/charts entry as validated (ChartDefinitionDto). */
export interface ChartEntry {
  levelId: number;
  name: string;
  difficultyConstant: number;
  version: string;
  active: boolean;
  createdAt?: string;
  notes?: number | null;
}

/** A validated PUT /admin/charts entry as stored: createdAt read as a local date-time, notes null when absent. */
export function toChartDefinition(entry: ChartEntry): ChartDefinition {
  const { levelId, name, difficultyConstant, version, active, createdAt, notes } = entry;
  return {
    levelId,
    name,
    difficultyConstant,
    version,
    active,
    createdAt: createdAt === undefined ? null : parseLocalDateTime(createdAt),
    notes: notes ?? null,
  };
}

/** Name and version of the inactive row created for a level id an upload names but the catalog lacks. */
export function placeholderChart(levelId: number): Omit<ChartDefinition, 'createdAt'> {
  return { levelId, name: `Level ${levelId}`, difficultyConstant: 0, version: 'unknown', active: false, notes: null };
}
