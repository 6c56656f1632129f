import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { loginPlayer, createPlayer, TestPlayerSession } from '../factories/player.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';

let clock = Date.now() - 3_600_000;
/** Increasing payload.time: the time a best was first reached orders as the uploads do. */
const nextTime = () => (clock += 1_000);

/** Uploads one play; answers the upload's body (its ranks are what the public API must show). */
async function play(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown> = {},
): Promise<{ atp: number; siteRank: number | null; trackRank: number | null }> {
  const payload = gameplayPayload(levelID, nextTime(), overrides);
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
  return response.body as { atp: number; siteRank: number | null; trackRank: number | null };
}

/** A play that changes nothing (pass: false): the upload answers the player's ranks now. */
const look = (app: TestApp, server: TestServerSession, player: TestPlayerSession, levelID: number) =>
  play(app, server, player, levelID, { pass: false, acc: 10 });

async function createKey(
  app: TestApp,
  body: { name?: string; scopes: string[]; rateLimit?: number | null },
): Promise<{ id: number; key: string }> {
  const response = await app.admin.post('/admin/api-keys', { name: body.name ?? 'test', ...body });
  if (response.status !== 201) throw new Error(`createKey: ${response.status} ${response.text}`);
  return response.body as { id: number; key: string };
}

/** A raw GET (node:http): any header, Origin included, and every answer header as sent. */
function rawGet(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString() }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('Public API', () => {
  let app: TestApp;
  let server: TestServerSession;
  let boardsKey: string;
  let playersKey: string;
  let bothKey: string;
  const get = (path: string, key: string | null, query: Record<string, string | number> = {}) =>
    app.http.get(`/public/v1/${path}`, { token: key, query });

  beforeAll(async () => {
    app = await startTestApp({ env: { PUBLIC_API_CORS_ORIGINS: 'https://site.example' } });
    server = await onlineServer(app);
    boardsKey = (await createKey(app, { scopes: ['read:boards'] })).key;
    playersKey = (await createKey(app, { scopes: ['read:players'] })).key;
    bothKey = (await createKey(app, { scopes: ['read:boards', 'read:players'] })).key;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('smoke', async () => {
    const p = await loginPlayer(app, server, await createPlayer(app, { username: 'Steve' }));
    await app.admin.put('/admin/charts', [{ levelId: 701, name: 'Alpha', difficultyConstant: 10, version: '1.0', active: true }]);
    await play(app, server, p, 701, { acc: 99 });
    console.log(JSON.stringify((await get('boards/atp', boardsKey)).body));
    console.log(JSON.stringify((await get(`players/${p.uid}`, playersKey)).body));
    console.log(JSON.stringify((await get('players', playersKey, { prefix: 'st' })).body));
    console.log(JSON.stringify((await get('first-places', bothKey)).body));
    console.log(JSON.stringify((await get('charts', bothKey)).body));
    const r = await rawGet(app.baseUrl, '/public/v1/boards/atp', { Authorization: `Bearer ${boardsKey}`, Origin: 'https://site.example' });
    console.log(r.status, JSON.stringify(r.headers));
    console.log(JSON.stringify((await app.admin.get('/admin/api-keys')).body));
    void look; void createHash; void multiInstanceAvailable;
  });
});
