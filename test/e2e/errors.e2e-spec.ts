import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createServer, onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { badLines, badRequest } from '../support/bad-request';

describe('Error bodies, body limits and rate limits', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { THROTTLE_LOGIN_LIMIT: '3', THROTTLE_LOGIN_TTL_SECONDS: '30' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    const response = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: '{"enabled": tru',
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badRequest('Malformed JSON body'));
  });

  it.each([
    ['null', 'null'],
    ['"a server"', 'a string'],
    [' 7', 'a number'],
    ['true', 'a boolean'],
  ])('names a JSON body %s that is not an object or array in its 400, and stores nothing', async (raw, kind) => {
    const before = await app.sql('SELECT id FROM game_server');
    const response = await app.http.request('POST', '/admin/servers', { token: app.config.adminToken, rawBody: raw });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badRequest(`The request body must be a JSON object or array, not ${kind}`));
    expect(await app.sql('SELECT id FROM game_server')).toEqual(before);
  });

  it('reads no body at all as {} on a route whose fields are all optional, and still refuses a body that is not JSON', async () => {
    const created = await app.admin.post('/admin/players', { username: 'NoBodyBan' });
    expect(created.status).toBe(201);
    const uid = created.body.uid as string;
    const banned = () => app.sql('SELECT reason, message, until FROM player_ban WHERE uid = $1', [uid]);
    // A body that is not JSON is not an absent body: refused as before, the player not banned.
    const typed = await app.http.request('POST', `/admin/players/${uid}/ban`, {
      token: app.config.adminToken,
      rawBody: '{"reason":"typed"}',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(typed.status).toBe(400);
    expect(typed.body).toEqual(badRequest('The request body must be a JSON object'));
    expect(await banned()).toEqual([]);
    // `curl -X POST` with no body: the same ban as `{}` (permanent, the default message).
    const bare = await app.http.request('POST', `/admin/players/${uid}/ban`, { token: app.config.adminToken });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({ uid, reason: '', message: 'You are banned', until: '' });
    expect(await banned()).toEqual([{ reason: '', message: 'You are banned', until: null }]);
    // curl's `-X POST` without `-d`: no Content-Length at all (fetch above sent `Content-Length: 0`).
    const other = (await app.admin.post('/admin/players', { username: 'NoLengthBan' })).body.uid as string;
    const curl = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // Written, not ended: the answer needs a database round trip, and a half-closed socket loses it.
      const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1', () =>
        socket.write(
          `POST /admin/players/${other}/ban HTTP/1.1\r\nHost: x\r\n` +
            `Authorization: Bearer ${app.config.adminToken}\r\nConnection: close\r\n\r\n`,
        ),
      );
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head, body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body });
      });
    });
    expect({ status: curl.status, body: JSON.parse(curl.body) as unknown }).toEqual({
      status: 200,
      body: { uid: other, reason: '', message: 'You are banned', until: '' },
    });
    // A route with a required field still needs its body.
    const server = await app.http.request('POST', '/admin/servers', { token: app.config.adminToken });
    expect(server.status).toBe(400);
    expect(server.body).toEqual(badRequest('The request body must be a JSON object'));
  });

  it.each(['gzip', 'deflate', 'br'])(
    'answers a body that does not decompress as %s with 400 and stores nothing',
    async (encoding) => {
      const response = await app.http.request('POST', '/admin/servers', {
        token: app.config.adminToken,
        rawBody: JSON.stringify({ name: `raw-${encoding}`, country: 'DE' }),
        headers: { 'Content-Encoding': encoding },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badRequest('The request body could not be decompressed'));
      expect(await app.sql(`SELECT 1 FROM game_server WHERE name = $1`, [`raw-${encoding}`])).toHaveLength(0);
    },
  );

  it('refuses a body whose Content-Type is over 256 characters with 400, before parsing it, and stores nothing', async () => {
    // An unterminated quoted parameter: body-parser's parse of 15 KB of it took ~12 ms a request.
    const long = `application/json; a="${';\\"'.repeat(85)}`;
    expect(long.length).toBeGreaterThan(256);
    const response = await app.http.request('POST', '/admin/servers', {
      token: app.config.adminToken,
      rawBody: JSON.stringify({ name: 'long-type', country: 'DE' }),
      headers: { 'Content-Type': long },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('connection')).toBe('close');
    expect(response.body).toEqual(badRequest('Content-Type header too long (at most 256 characters)'));
    expect(await app.sql(`SELECT 1 FROM game_server WHERE name = 'long-type'`)).toHaveLength(0);
    // 256 characters is still read.
    const longest = `application/json; charset=utf-8; a=${'b'.repeat(256 - 35)}`;
    expect(longest.length).toBe(256);
    const accepted = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: JSON.stringify({ enabled: false, message: 'typed' }),
      headers: { 'Content-Type': longest },
    });
    expect({ status: accepted.status, body: accepted.body }).toEqual({
      status: 200,
      body: { enabled: false, message: 'typed' },
    });
  });

  it('still reads a gzip-compressed JSON body', async () => {
    const response = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: gzipSync(JSON.stringify({ enabled: false, message: 'zipped' })),
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ enabled: false, message: 'zipped' });
  });

  it('refuses a NUL character anywhere in a JSON body with 400 naming it, and stores nothing', async () => {
    const response = await app.http.post(
      '/admin/servers',
      { name: 'nul\u0000name', country: 'DE' },
      { token: app.config.adminToken },
    );
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badLines('name must not contain the NUL character (\\u0000)'));
    expect(await app.sql(`SELECT 1 FROM game_server WHERE name LIKE 'nul%'`)).toHaveLength(0);

    const maintenance = await app.http.put(
      '/admin/maintenance',
      { enabled: true, message: 'down\u0000' },
      { token: app.config.adminToken },
    );
    expect(maintenance.status).toBe(400);
    expect(maintenance.body).toEqual(badLines('message must not contain the NUL character (\\u0000)'));
    expect(
      await app.sql(`SELECT 1 FROM service_setting WHERE key = 'maintenance' AND value->>'message' LIKE 'down%'`),
    ).toHaveLength(0);
  });

  it('refuses a lone surrogate in a JSON body with 400 instead of storing a replacement character', async () => {
    const response = await app.http.request('POST', '/admin/servers', {
      token: app.config.adminToken,
      rawBody: '{"name":"half\\ud83c","country":"DE"}',
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badLines('name must not contain a lone surrogate (\\ud800-\\udfff)'));
    expect(await app.sql(`SELECT 1 FROM game_server WHERE name LIKE 'half%'`)).toHaveLength(0);
  });

  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses the key %s in a JSON body with 400 instead of dropping it silently',
    async (key) => {
      const response = await app.http.request('POST', '/admin/servers', {
        token: app.config.adminToken,
        rawBody: `{"name":"reserved-${key}","country":"DE","${key}":{"isAdmin":true}}`,
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badRequest(`The key "${key}" in the request body is not accepted`));
      expect(await app.sql(`SELECT 1 FROM game_server WHERE name = $1`, [`reserved-${key}`])).toHaveLength(0);

      const nested = await app.http.request('PUT', '/admin/charts', {
        token: app.config.adminToken,
        rawBody: `[{"levelId":1,"name":"x","difficultyConstant":1,"version":"1","active":true,"${key}":1}]`,
      });
      expect(nested.status).toBe(400);
      expect(nested.body).toEqual(badRequest(`The key "${key}" in [0] is not accepted`));
      expect(await app.sql(`SELECT 1 FROM chart WHERE level_id = 1`)).toHaveLength(0);
    },
  );

  it('refuses a body nested deeper than 64 levels with 400 (it exhausted the stack: 500)', async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    const response = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: `{"enabled":true,"x":${deep(5000)}}`,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'BAD_REQUEST',
      message: expect.stringMatching(/^The request body nests deeper than 64 levels \(at x(\.a)+\)$/),
      errors: [],
    });
    const collections = await app.http.request('PUT', '/admin/collections', {
      token: app.config.adminToken,
      rawBody: `[{"key":"deep:rule.x","type":"title","unlockMethod":{"type":"MANUAL","info":${deep(10000)}},"properties":{"title":"x"}}]`,
    });
    expect(collections.status).toBe(400);
    expect(collections.body.message).toMatch(
      /^The request body nests deeper than 64 levels \(at \[0\]\.unlockMethod\.info(\.a)+\)$/,
    );
    expect(await app.sql(`SELECT 1 FROM collection WHERE key = 'deep:rule.x'`)).toHaveLength(0);
    // 64 levels are still taken.
    const fine = await app.http.request('PUT', '/admin/collections', {
      token: app.config.adminToken,
      rawBody: `[{"key":"deep:rule.y","type":"title","unlockMethod":{"type":"MANUAL","info":${deep(61)}},"properties":{"title":"x"}}]`,
    });
    expect(fine.status).toBe(200);
  });

  it('refuses an object of more than 1000 keys with 400 (class-transformer is quadratic in them)', async () => {
    const keyed = (count: number) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_value, i) => [`k${i}`, 'x'])));
    const collection = (key: string, count: number) =>
      `[{"key":"${key}","type":"title","unlockMethod":{"type":"MANUAL","info":${keyed(count)}},"properties":{"title":"x"}}]`;
    const refused = await app.http.request('PUT', '/admin/collections', {
      token: app.config.adminToken,
      rawBody: collection('wide:rule.x', 1001),
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(badRequest('[0].unlockMethod.info has more than 1000 keys'));
    expect(await app.sql(`SELECT 1 FROM collection WHERE key = 'wide:rule.x'`)).toHaveLength(0);
    // Tens of thousands of keys in one object (well inside 256 KiB) are refused the same way.
    const huge = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: keyed(20_000),
    });
    expect(huge.status).toBe(400);
    expect(huge.body).toEqual(badRequest('the request body has more than 1000 keys'));
    // 1000 are still taken.
    const fine = await app.http.request('PUT', '/admin/collections', {
      token: app.config.adminToken,
      rawBody: collection('wide:rule.y', 1000),
    });
    expect(fine.status).toBe(200);
  });

  it('answers a JSON array where an object is expected with 400', async () => {
    const response = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: '[1,2]',
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badRequest('The request body must be a JSON object'));
  });

  it('answers bodies over 256 KiB with 413 and stores nothing', async () => {
    const big = JSON.stringify({ name: 'big', country: 'x'.repeat(256 * 1024) });
    const response = await app.http.request('POST', '/admin/servers', { token: app.config.adminToken, rawBody: big });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: 'Request body exceeds 262144 bytes' });
    expect(await app.sql(`SELECT 1 FROM game_server WHERE name = 'big'`)).toHaveLength(0);
  });

  it.each([
    ['no encoding', '', '262145'],
    ['gzip', 'Content-Encoding: gzip\r\n', '999999999'],
  ])(
    'answers a body declared over 256 KiB (%s) with 413 at once, without waiting for it, and closes the connection',
    async (_label, encoding, length) => {
      const started = Date.now();
      const answer = await new Promise<{ text: string; closed: boolean }>((resolve, reject) => {
        const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1', () =>
          // The headers only; the socket stays open for the body that never comes.
          socket.write(
            `POST /admin/servers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.config.adminToken}\r\n` +
              `Content-Type: application/json\r\n${encoding}Content-Length: ${length}\r\n\r\n{`,
          ),
        );
        const chunks: Buffer[] = [];
        const timer = setTimeout(() => {
          socket.destroy();
          resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false });
        }, 5_000);
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          clearTimeout(timer);
          resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true });
        });
      });
      const [head, body = ''] = answer.text.split('\r\n\r\n');
      expect({ status: /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1], closed: answer.closed }).toEqual({
        status: '413',
        closed: true,
      });
      expect(head).toMatch(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(body)).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: 'Request body exceeds 262144 bytes' });
      expect(Date.now() - started).toBeLessThan(5_000);
    },
  );

  it('gives a client 20 s for its headers and 60 s for its whole request (node: 60 s and 300 s)', () => {
    const server = app.get(HttpAdapterHost).httpAdapter.getHttpServer() as Server;
    expect({ headers: server.headersTimeout, request: server.requestTimeout }).toEqual({
      headers: 20_000,
      request: 60_000,
    });
  });

  it('accepts a body just under 256 KiB (then validates it)', async () => {
    const body = JSON.stringify({ enabled: true, message: 'x'.repeat(256 * 1024 - 100) });
    const response = await app.http.request('PUT', '/admin/maintenance', {
      token: app.config.adminToken,
      rawBody: body,
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('message must be shorter than or equal to 512 characters');
  });

  /** Sends raw bytes and reads the whole answer (node's client refuses to send most of these). */
  function rawHttp(request: Buffer): Promise<{ status: number; head: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(app.baseUrl).port), '127.0.0.1', () => socket.end(request));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        const [head, body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, body });
      });
    });
  }

  it.each([
    [
      'a raw non-ASCII byte in the request target',
      Buffer.from('GET /server/ping?q=\xe9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
      400,
      'Malformed HTTP request',
    ],
    [
      'a malformed request line',
      Buffer.from('GET /server/ping HTTP/1.1 extra\r\nHost: x\r\n\r\n', 'latin1'),
      400,
      'Malformed HTTP request',
    ],
    [
      'headers over 16 KiB',
      Buffer.from(
        `GET /server/ping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`,
        'latin1',
      ),
      431,
      'Request headers are too large',
    ],
  ])('answers %s (refused by the HTTP parser) with the error body', async (_label, request, status, message) => {
    const response = await rawHttp(request);
    expect(response.status).toBe(status);
    expect(response.head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(JSON.parse(response.body)).toEqual(badRequest(message));
  });

  it('answers a HEAD request refused by the HTTP parser without a body', async () => {
    const response = await rawHttp(Buffer.from('HEAD /server/ping?q=\xe9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'));
    expect(response.status).toBe(400);
    expect(response.head).toMatch(/\r\nContent-Length: \d+\r\n/);
    expect(response.body).toBe('');
  });

  it('answers unknown routes with 404 NOT_FOUND', async () => {
    const response = await app.http.get('/no/such/route', { token: null });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Not found' });
  });

  it('limits server login per credential with 429 RATE_LIMITED and Retry-After; a failure from the same address is not its login', async () => {
    const server = await createServer(app);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const token = i === 0 ? 'wrong-token' : server.bootstrapToken;
      statuses.push((await app.http.post('/server/login', { pluginVersion: 1, pluginSHA: 'x' }, { token })).status);
    }
    expect(statuses).toEqual([401, 200, 200, 200]);
    const limited = await app.http.post(
      '/server/login',
      { pluginVersion: 1, pluginSHA: 'x' },
      { token: server.bootstrapToken },
    );
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'RATE_LIMITED',
      message: expect.stringMatching(/^Too many requests; retry in \d+ s$/),
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    // Other routes are not limited.
    expect((await app.http.get('/server/ping', { token: null })).status).toBe(200);
  });
});

describe('Validation messages', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('states a field problem once when two rules of the field share the message', async () => {
    const server = await onlineServer(app);
    const response = await app.http.post(
      '/player/economy',
      { uid: 0, accessToken: 'x', wattHour: 1 },
      { token: server.accessToken },
    );
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badLines('uid must be a positive integer'));
  });
});

describe('Health', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('GET /health answers 200 without authentication', async () => {
    const response = await app.http.get('/health', { token: null });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('ok');
  });

  it('GET /health/ready reports the database up', async () => {
    const response = await app.http.get('/health/ready', { token: null });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });
  });
});
