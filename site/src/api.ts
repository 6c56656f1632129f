/**
 * The site's reads: the public API of this origin, without a key (its anonymous tier, limited per
 * address; docs/decisions.md "Leaderboard site"). The browser keeps the answers' ETag and revalidates
 * them itself (304). Every failure becomes a SiteError with a sentence a visitor can read.
 */

/**
 * /public/v1 beside SITE_PATH (one path segment), resolved from the page's own address, so a proxy
 * that serves the whole service under a prefix (https://example.org/rhythm/site/) still works.
 */
export const API_BASE = new URL('../public/v1', document.baseURI).pathname;

export class SiteError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds to wait, from Retry-After (429, 503). */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

function retryAfterOf(response: Response): number | null {
  const value = response.headers.get('Retry-After');
  if (value === null || !/^\d{1,6}$/.test(value.trim())) return null;
  return Number(value.trim());
}

function messageOf(status: number, apiMessage: string | null, retryAfter: number | null): string {
  const wait = retryAfter === null ? 'in a moment' : `in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`;
  if (status === 429) return `Too many requests from your address. Please try again ${wait}.`;
  if (status === 503) return `The leaderboards are unavailable right now. Please try again ${wait}.`;
  if (status === 404) return apiMessage ?? 'Not found.';
  if (status === 401 || status === 403) return 'The leaderboards are not open to the public right now.';
  if (status === 0) return 'The leaderboards could not be reached. Check your connection and try again.';
  return `Something went wrong (${status}). Please try again later.`;
}

export async function read<T>(path: string, query: Record<string, string | number> = {}): Promise<T> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) params.set(name, String(value));
  const text = params.toString();
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}${text ? `?${text}` : ''}`, {
      headers: { Accept: 'application/json' },
      credentials: 'omit',
    });
  } catch {
    throw new SiteError(0, messageOf(0, null, null));
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const apiMessage = (body as { message?: unknown } | null)?.message;
    const retryAfter = retryAfterOf(response);
    throw new SiteError(
      response.status,
      messageOf(response.status, typeof apiMessage === 'string' ? apiMessage : null, retryAfter),
      retryAfter,
    );
  }
  if (body === null) throw new SiteError(response.status, messageOf(500, null, null));
  return body as T;
}

/** The answers the pages show (the public API's OpenAPI document has them all). */
export interface AtpEntry {
  rank: number;
  uid: number;
  username: string;
  displayName: string;
  atp: number;
}
export interface ChartEntry {
  rank: number;
  uid: number;
  username: string;
  displayName: string;
  acc: number;
  rating: number;
}
export interface Chart {
  levelId: number;
  name: string;
  difficultyConstant: number;
}
export interface PlayerSummary {
  uid: number;
  username: string;
  displayName: string;
  uuid: string | null;
}
export interface Best {
  levelId: number;
  chartName: string;
  acc: number;
  rating: number;
  trackRank: number | null;
}
export interface RecentPlay {
  levelId: number;
  chartName: string;
  acc: number;
  rating: number;
  fullCombo: boolean;
  allPerfect: boolean;
  maxCombo: number;
  playedAt: string;
}
export interface Profile extends PlayerSummary {
  atp: number | null;
  siteRank: number | null;
  bestCount: number;
  bests: Best[];
  recentPlays: RecentPlay[];
}

export const atpBoard = (limit: number) => read<{ entries: AtpEntry[] }>('/boards/atp', { limit });
export const chartBoard = (levelId: number, limit: number) =>
  read<{ levelId: number; entries: ChartEntry[] }>(`/boards/charts/${levelId}`, { limit });
export const charts = () => read<Chart[]>('/charts');
export const searchPlayers = (filter: { name: string } | { prefix: string }) =>
  read<{ players: PlayerSummary[] }>('/players', { ...filter, limit: 25 });
export const profileByUid = (uid: string) =>
  read<Profile>(`/players/${encodeURIComponent(uid)}`, { bests: 30, recent: 10 });
export const profileByUuid = (uuid: string) =>
  read<Profile>(`/players/uuid/${encodeURIComponent(uuid)}`, { bests: 30, recent: 10 });
