/** A small JSON client of the service for benchmark set-up, and the admin API (decisions.md §8). */
import { USER_AGENT } from './load';

export interface CallResult<T = unknown> {
  status: number;
  body: T;
  text: string;
}

export async function call<T = unknown>(
  baseUrl: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<CallResult<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      'User-Agent': USER_AGENT,
      'Content-Type': 'application/json',
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T, text };
}

/** A call that must answer `expected`; anything else throws with the answer. */
export async function expectCall<T = unknown>(
  expected: number,
  baseUrl: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<T> {
  const result = await call<T>(baseUrl, method, path, token, body);
  if (result.status !== expected)
    throw new Error(`${method} ${path}: expected ${expected}, got ${result.status} ${result.text.slice(0, 300)}`);
  return result.body;
}

export interface CreatedServer {
  serverID: number;
  serverName: string;
  bootstrapToken: string;
}

export interface CreatedPlayer {
  uid: number;
  username: string;
  displayName: string;
  uuid: string | null;
}

export class AdminApi {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  createServer(name: string, country = 'DE', ip?: string): Promise<CreatedServer> {
    return expectCall(201, this.baseUrl, 'POST', '/admin/servers', this.token, {
      name,
      country,
      ...(ip ? { ip } : {}),
    });
  }

  createPlayer(player: { username: string; uuid?: string; displayName?: string }): Promise<CreatedPlayer> {
    return expectCall(201, this.baseUrl, 'POST', '/admin/players', this.token, player);
  }

  async netToken(uid: number): Promise<string> {
    return (
      await expectCall<{ netToken: string }>(201, this.baseUrl, 'POST', `/admin/players/${uid}/net-token`, this.token)
    ).netToken;
  }

  putCharts(
    charts: Array<{ levelId: number; name: string; difficultyConstant: number; version: string; active: boolean }>,
  ): Promise<{ upserted: number }> {
    return expectCall(200, this.baseUrl, 'PUT', '/admin/charts', this.token, charts);
  }

  putCollections(collections: unknown[]): Promise<{ upserted: number }> {
    return expectCall(200, this.baseUrl, 'PUT', '/admin/collections', this.token, collections);
  }

  putPacks(
    packs: Array<{ name: string; displayName: string; type: string; availableSongs: number[]; file: string }>,
  ): Promise<{ upserted: number }> {
    return expectCall(200, this.baseUrl, 'PUT', '/admin/packs', this.token, packs);
  }

  /** PUT /admin/session-handover: which servers form one network (server switching). */
  putSessionHandover(setting: {
    mode: 'off' | 'all' | 'groups';
    groups?: Array<{ name: string; serverIDs: number[] }>;
    modes?: string[];
  }): Promise<unknown> {
    return expectCall(200, this.baseUrl, 'PUT', '/admin/session-handover', this.token, setting);
  }

  rescan(): Promise<{ data: number; lang: number; packs: number; bytes: number }> {
    return expectCall(200, this.baseUrl, 'POST', '/admin/resources/rescan', this.token);
  }

  ban(uid: number, reason: string): Promise<unknown> {
    return expectCall(200, this.baseUrl, 'POST', `/admin/players/${uid}/ban`, this.token, { reason });
  }
}
