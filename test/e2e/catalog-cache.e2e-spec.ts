import { onlineServer } from '../factories/server.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';

type OnlineServer = Awaited<ReturnType<typeof onlineServer>>;

const chart = (levelId: number, name: string) => ({
  levelId,
  name,
  difficultyConstant: 10,
  version: '1.0',
  active: true,
  createdAt: '2026-01-02T03:04:05',
});
const listed = (levelId: number, name: string) => ({
  levelId,
  name,
  difficultyConstant: 10,
  version: '1.0',
  createdAt: '2026-01-02T03:04:05',
});
const title = (key: string, name: string) => ({
  key,
  type: 'title',
  unlockMethod: { type: 'DEFAULT' },
  properties: { title: name },
});

describe('Catalog reads from memory', () => {
  let app: TestApp;
  let server: OnlineServer;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers with an ETag, and 304 without a body to a matching If-None-Match', async () => {
    expect((await app.admin.put('/admin/charts', [chart(1, 'One')])).status).toBe(200);
    for (const path of ['/server/charts', '/server/collections']) {
      const first = await app.http.get(path, { token: server.accessToken });
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(first.headers.get('cache-control')).toBe('no-cache');
      const etag = first.headers.get('etag') as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);

      const again = await app.http.get(path, { token: server.accessToken, headers: { 'If-None-Match': etag } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);

      const other = await app.http.get(path, {
        token: server.accessToken,
        headers: { 'If-None-Match': '"something-else"' },
      });
      expect(other.status).toBe(200);
      expect(other.body).toEqual(first.body);
    }
    // The token is still checked first.
    expect((await app.http.get('/server/charts', { token: 'not-a-token' })).status).toBe(401);
  });

  it("shows an admin write at once on the writer's instance, with a new ETag", async () => {
    const before = await app.http.get('/server/charts', { token: server.accessToken });
    expect((await app.admin.put('/admin/charts', [chart(2, 'Two')])).status).toBe(200);
    expect((await app.admin.put('/admin/collections', [title('rhythmc:title.cache', 'Cached')])).status).toBe(200);

    const after = await app.http.get('/server/charts', {
      token: server.accessToken,
      headers: { 'If-None-Match': before.headers.get('etag') as string },
    });
    expect(after.status).toBe(200);
    expect(after.body).toEqual([listed(1, 'One'), listed(2, 'Two')]);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    const collections = await app.http.get<Array<{ key: string }>>('/server/collections', {
      token: server.accessToken,
    });
    expect(collections.body.map((c) => c.key)).toContain('rhythmc:title.cache');
  });

  it('a refused admin write leaves the generation and the lists alone', async () => {
    const [before] = await app.sql<{ generation: string }>(
      'SELECT generation::text AS generation FROM catalog_generation',
    );
    const refused = await app.admin.put('/admin/charts', [
      chart(3, 'Three'),
      { levelId: -1, name: 'Bad', difficultyConstant: 1, version: '1', active: true },
    ]);
    expect(refused.status).toBe(400);
    expect(await app.sql('SELECT generation::text AS generation FROM catalog_generation')).toEqual([before]);
    expect((await app.http.get('/server/charts', { token: server.accessToken })).body).toEqual([
      listed(1, 'One'),
      listed(2, 'Two'),
    ]);
  });

  it('serves from memory: a change behind its back is seen once the generation moves (a lost event), within a second', async () => {
    await app.http.get('/server/charts', { token: server.accessToken });
    await app.sql("UPDATE chart SET name = 'One (edited)' WHERE level_id = 1");
    await sleep(1_200);
    // Nothing told the cache: the same bytes as before.
    expect((await app.http.get('/server/charts', { token: server.accessToken })).body).toEqual([
      listed(1, 'One'),
      listed(2, 'Two'),
    ]);

    await app.sql('UPDATE catalog_generation SET generation = generation + 1');
    await eventually(
      async () =>
        JSON.stringify((await app.http.get('/server/charts', { token: server.accessToken })).body) ===
        JSON.stringify([listed(1, 'One (edited)'), listed(2, 'Two')]),
      'the edited chart is served after the generation moved',
      3_000,
    );
  });
});

(multiInstanceAvailable() ? describe : describe.skip)('Catalog reads on two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ shareWith: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("an admin write on one instance reaches the other's cached lists", async () => {
    const session = await onlineServer(a);
    expect((await a.admin.put('/admin/charts', [chart(10, 'Ten')])).status).toBe(200);
    expect((await b.http.get('/server/charts', { token: session.accessToken })).body).toEqual([listed(10, 'Ten')]);

    expect((await a.admin.put('/admin/charts', [chart(11, 'Eleven')])).status).toBe(200);
    // The event arrives in milliseconds; the generation check would catch it within a second anyway.
    await eventually(
      async () => (await b.http.get<unknown[]>('/server/charts', { token: session.accessToken })).body.length === 2,
      'instance B lists the chart written through A',
      2_000,
    );
    expect((await b.http.get('/server/charts', { token: session.accessToken })).body).toEqual([
      listed(10, 'Ten'),
      listed(11, 'Eleven'),
    ]);
  });
});
