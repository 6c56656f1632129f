import { createPlayer } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Structured 400 bodies (docs/decisions.md "Errors"): every BAD_REQUEST carries `errors`, the
 * problems by field, beside §2's `error` and `message` (unchanged). Exact bodies for a body, a
 * nested body, a query, a path, batch elements, unknown fields and the caps.
 */
describe('400 bodies list their problems by field', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  const serverCount = async () => (await app.sql<{ n: number }>('SELECT count(*)::int AS n FROM game_server'))[0].n;

  it('a body: each field, with the message unchanged', async () => {
    const before = await serverCount();
    const response = await app.admin.post('/admin/servers', { name: '', country: 'x'.repeat(65), ip: 'not-an-ip' });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message:
          'name should not be empty; country must be shorter than or equal to 64 characters; ip must be an ip address',
        errors: [
          { field: 'name', message: 'should not be empty' },
          { field: 'country', message: 'must be shorter than or equal to 64 characters' },
          { field: 'ip', message: 'must be an ip address' },
        ],
      },
    });
    expect(await serverCount()).toBe(before);
  });

  it('a nested body: the path with dots, an array inside an object by its position', async () => {
    const response = await app.admin.put('/admin/session-handover', {
      mode: 'groups',
      groups: [{ name: 'a b', serverIDs: [0, 2] }],
    });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message:
          'groups.0.name must be 1-64 characters of A-Z, a-z, 0-9, _, . and -; groups.0.serverIDs must be integers from 1 to 2147483647',
        errors: [
          { field: 'groups.0.name', message: 'must be 1-64 characters of A-Z, a-z, 0-9, _, . and -' },
          { field: 'groups.0.serverIDs', message: 'must be integers from 1 to 2147483647' },
        ],
      },
    });
  });

  it('a rule of the service about one field (after the DTO passed)', async () => {
    const player = await createPlayer(app);
    const response = await app.admin.post(`/admin/players/${player.uid}/ban`, { until: '2020-01-01T00:00:00' });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message: 'until must be in the future',
        errors: [{ field: 'until', message: 'must be in the future' }],
      },
    });
    expect(await app.sql('SELECT 1 FROM player_ban WHERE uid = $1', [player.uid])).toEqual([]);
  });

  it('a query: a DTO query (plugin route) and an admin list query', async () => {
    const server = await onlineServer(app);
    const baltop = await app.http.get('/server/baltop?limit=1e1&cacheBuster=1', { token: server.accessToken });
    expect({ status: baltop.status, body: baltop.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message: 'limit must be an integer from 1 to 100',
        errors: [{ field: 'limit', message: 'must be an integer from 1 to 100' }],
      },
    });
    const list = await app.admin.get('/admin/servers?online=yes');
    expect({ status: list.status, body: list.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message: 'online must be true or false',
        errors: [{ field: 'online', message: 'must be true or false' }],
      },
    });
  });

  it('a path parameter', async () => {
    for (const path of ['/admin/players/0x1', '/admin/players/1.0', '/admin/players/-1']) {
      const response = await app.admin.get(path);
      expect({ path, status: response.status, body: response.body }).toEqual({
        path,
        status: 400,
        body: {
          error: 'BAD_REQUEST',
          message: 'uid must be a positive integer',
          errors: [{ field: 'uid', message: 'must be a positive integer' }],
        },
      });
    }
  });

  it('batch elements: index is the position in the batch, field the property inside it (both wordings)', async () => {
    const chart = { levelId: 9301, name: 'Nine', difficultyConstant: 3, version: '1', active: true };
    const charts = await app.admin.put('/admin/charts', [chart, { ...chart, levelId: 9302, active: 'yes' }, 'x']);
    expect({ status: charts.status, body: charts.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message: '[1] active: must be a boolean; [2] entry: must be a JSON object',
        errors: [
          { index: 1, field: 'active', message: 'must be a boolean' },
          { index: 2, field: '', message: 'must be a JSON object' },
        ],
      },
    });
    expect(await app.sql('SELECT 1 FROM chart WHERE level_id IN (9301, 9302)')).toEqual([]);

    const pack = { name: 'p-1', displayName: 'P', type: 'SONG', availableSongs: [], file: 'packs/p.zip' };
    const packs = await app.admin.put('/admin/packs', [pack, { ...pack, name: 'p-2', type: 'HALF', extra: 1 }]);
    expect({ status: packs.status, body: packs.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message: '[1].extra: property extra should not exist; [1].type must be one of FULL, CHAPTER, SONG',
        errors: [
          { index: 1, field: 'extra', message: 'unknown field' },
          { index: 1, field: 'type', message: 'must be one of FULL, CHAPTER, SONG' },
        ],
      },
    });
    expect(await app.sql('SELECT 1 FROM resource_pack')).toEqual([]);
  });

  it('an unknown field is named as sent, cut at 64 characters, escaped by JSON', async () => {
    const before = await serverCount();
    const key = `"}</script>\n${'é'.repeat(100)}`;
    const response = await app.admin.post('/admin/servers', { name: 'named', country: 'DE', [key]: 1 });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 'BAD_REQUEST',
        message: `${key}: property ${key} should not exist`,
        errors: [{ field: key.slice(0, 64), message: 'unknown field' }],
      },
    });
    expect(await serverCount()).toBe(before);
    // An unknown parameter of an admin list, and of a public route without parameters.
    const list = await app.admin.get(`/admin/servers?${'q'.repeat(100)}=1`);
    expect(list.body).toEqual({
      error: 'BAD_REQUEST',
      message: `${'q'.repeat(100)}: property ${'q'.repeat(100)} should not exist`,
      errors: [{ field: 'q'.repeat(64), message: 'unknown field' }],
    });
  });

  it('lists at most 20 problems; message still names every one (a body) or counts the rest (a batch)', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    const body = await app.admin.post('/admin/servers', {
      name: 'capped',
      country: 'DE',
      ...Object.fromEntries(keys.map((key) => [key, 1])),
    });
    expect(body.status).toBe(400);
    expect(body.body).toEqual({
      error: 'BAD_REQUEST',
      message: keys.map((key) => `${key}: property ${key} should not exist`).join('; '),
      errors: keys.slice(0, 20).map((field) => ({ field, message: 'unknown field' })),
    });

    const batch = await app.admin.put(
      '/admin/charts',
      Array.from({ length: 25 }, () => 'x'),
    );
    expect(batch.status).toBe(400);
    expect(batch.body).toEqual({
      error: 'BAD_REQUEST',
      message: `${Array.from({ length: 20 }, (_, i) => `[${i}] entry: must be a JSON object`).join('; ')}; … and 5 more`,
      errors: Array.from({ length: 20 }, (_, index) => ({ index, field: '', message: 'must be a JSON object' })),
    });
  });

  it('a request wrong as a whole carries an empty list', async () => {
    const malformed = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: '{"enabled": tru',
    });
    expect({ status: malformed.status, body: malformed.body }).toEqual({
      status: 400,
      body: { error: 'BAD_REQUEST', message: 'Malformed JSON body', errors: [] },
    });
    const notObject = await app.admin.post('/admin/servers', ['name']);
    expect(notObject.body).toEqual({
      error: 'BAD_REQUEST',
      message: 'The request body must be a JSON object',
      errors: [],
    });
  });
});
