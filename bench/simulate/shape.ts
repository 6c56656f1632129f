/** Minimal body-shape checks for the smoke: each answer's fields and their JSON types, as interface.md lists them. */

export type Shape =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'null'
  | 'array'
  | 'object'
  | 'any'
  | Shape[]
  | { [field: string]: Shape };

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function matches(value: unknown, shape: Shape, path: string): string | null {
  if (Array.isArray(shape)) {
    const problems = shape.map((option) => matches(value, option, path));
    return problems.some((problem) => problem === null)
      ? null
      : `${path} is ${JSON.stringify(value)?.slice(0, 60)}, expected ${shape.map((option) => (typeof option === 'string' ? option : 'an object')).join(' or ')}`;
  }
  if (typeof shape === 'object') {
    if (typeOf(value) !== 'object') return `${path} is ${typeOf(value)}, expected an object`;
    for (const [field, inner] of Object.entries(shape)) {
      const problem = matches((value as Record<string, unknown>)[field], inner, `${path}.${field}`);
      if (problem) return problem;
    }
    return null;
  }
  switch (shape) {
    case 'any':
      return null;
    case 'integer':
      return Number.isInteger(value) ? null : `${path} is ${JSON.stringify(value)?.slice(0, 60)}, expected an integer`;
    default:
      return typeOf(value) === shape ? null : `${path} is ${typeOf(value)}, expected ${shape}`;
  }
}

/** Null when `value` has the shape, else the first problem ("body.accessToken is undefined, expected string"). */
export function shapeProblem(value: unknown, shape: Shape): string | null {
  return matches(value, shape, 'body');
}

/** Null when `value` is an array whose every element has `shape`. */
export function arrayProblem(value: unknown, shape: Shape): string | null {
  if (!Array.isArray(value)) return `body is ${typeOf(value)}, expected an array`;
  for (let i = 0; i < value.length; i++) {
    const problem = matches(value[i], shape, `body[${i}]`);
    if (problem) return problem;
  }
  return null;
}

export const ERROR_BODY: Shape = { error: 'string', message: 'string' };

export const SERVER_SESSION: Shape = {
  serverID: 'integer',
  serverName: 'string',
  assetServer: 'string',
  serverIP: 'string',
  country: 'string',
  wsServer: 'string',
  accessToken: 'string',
  expiresIn: 'integer',
};

export const PLAYER_PROFILE: Shape = {
  uid: 'integer',
  username: 'string',
  displayName: 'string',
  version: 'integer',
  banstate: 'integer',
  accessToken: 'string',
  expiresIn: 'integer',
  resumeToken: 'string',
  resumeExpiresIn: 'integer',
  options: { continueEnabled: 'boolean', sound: 'object', songSelectionState: 'object' },
  data: { collections: 'array' },
};

export const COLLECTION: Shape = {
  key: 'string',
  type: 'string',
  unlockMethod: { type: 'string' },
  properties: 'object',
};
export const CHART: Shape = {
  levelId: 'integer',
  name: 'string',
  difficultyConstant: 'number',
  version: 'string',
  createdAt: 'string',
};
export const MANIFEST_ENTRY: Shape = { path: 'string', sha256: 'string' };
export const DOWNLOAD_ENTRY: Shape = { path: 'string', url: 'string', bytes: 'integer', sha256: 'string' };
export const PACK_ENTRY: Shape = {
  name: 'string',
  displayName: 'string',
  type: 'string',
  availableSongs: 'array',
  size: 'integer',
  sha1: 'string',
  url: 'string',
};
export const RANKING_ENTRY: Shape = {
  rank: 'integer',
  uid: 'integer',
  username: 'string',
  displayName: 'string',
  wattHour: 'integer',
};
export const UPLOAD_RESULT: Shape = {
  atp: 'number',
  siteRank: ['integer', 'null'],
  trackRank: ['integer', 'null'],
  playRating: 'number',
  personalBest: 'boolean',
};
export const CHAT_FRAME: Shape = {
  uid: 'integer',
  username: 'string',
  displayName: 'string',
  message: 'string',
  serverID: 'integer',
  serverName: 'string',
  prefix: ['object', 'null'],
  suffix: ['object', 'null'],
};
