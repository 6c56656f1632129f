import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPlayer, loginPlayer } from '../factories/player.factory';
import { createServer, loginServer, TestServerSession } from '../factories/server.factory';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { sleep } from '../support/wait';
import { gameplayPayload } from '../factories/upload.factory';

type Labels = Record<string, string>;
interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

/** The samples of a Prometheus text exposition (0.0.4). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Labels = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

const sameLabels = (a: Labels, b: Labels) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([key, value]) => a[key] === value);

describe('Prometheus metrics', () => {
  let app: TestApp;

  async function scrape(): Promise<Sample[]> {
    const response = await app.http.get('/metrics', { token: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8; version=0.0.4');
    return parseExposition(response.text);
  }

  /** The value of the one sample with exactly these labels; undefined when there is none. */
  function valueOf(samples: Sample[], name: string, labels: Labels = {}): number | undefined {
    const found = samples.filter((sample) => sample.name === name && sameLabels(sample.labels, labels));
    if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} appears ${found.length} times`);
    return found[0]?.value;
  }

  /** Scrapes until the sample has the value (the socket is closed on the server a moment after the client sees it). */
  async function waitForValue(name: string, labels: Labels, expected: number): Promise<void> {
    const deadline = Date.now() + 15_000;
    let last: number | undefined;
    while (Date.now() < deadline) {
      last = valueOf(await scrape(), name, labels);
      if (last === expected) return;
      await sleep(50);
    }
    throw new Error(`${name} ${JSON.stringify(labels)} stayed ${last}, expected ${expected}`);
  }

  async function liveSessionsInDatabase(): Promise<{ servers: number; players: number }> {
    const [row] = await app.sql<{ servers: number; players: number }>(
      `SELECT (SELECT count(*) FROM server_session WHERE ended_at IS NULL AND token_expires_at > now())::int AS servers,
              (SELECT count(*) FROM player_session WHERE logged_out_at IS NULL AND token_expires_at > now())::int AS players`,
    );
    return row;
  }

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('counts requests, logins and uploads by route pattern and outcome after real traffic', async () => {
    const server = await createServer(app);
    const session: TestServerSession = await loginServer(app, server);
    expect(
      (
        await app.http.post(
          '/server/login',
          { pluginVersion: 10, pluginSHA: 'sha-test' },
          { token: 'not-a-bootstrap-token' },
        )
      ).status,
    ).toBe(401);

    const player = await createPlayer(app);
    const online = await loginPlayer(app, session, player);
    const serverApi = app.http.withToken(session.accessToken);
    expect(
      (await serverApi.post('/player/login', { mode: 'TOKEN', version: 1, authToken: player.netToken })).body.error,
    ).toBe('SESSION_CONFLICT');
    expect(
      (await serverApi.post('/player/login', { mode: 'TOKEN', version: 1, authToken: 'wrong-net-token' })).body.error,
    ).toBe('UNAUTHORIZED');
    expect((await serverApi.post('/player/login', { mode: 'TELEPATHY', version: 1 })).body.error).toBe('BAD_REQUEST');

    const time = Date.now() - 3_600_000;
    const record = (accessToken: string) => ({
      player: { playerUID: player.uid, accessToken, timestamp: time + 250 },
      server: { serverID: session.serverID, serverName: server.serverName, country: 'DE' },
      payload: gameplayPayload(3, time, { acc: 97.25, isNewRecord: true }),
    });
    expect((await serverApi.post('/player/upload', record(online.accessToken))).status).toBe(200);
    expect((await serverApi.post('/player/upload', record('not-the-token'))).status).toBe(401);
    // A play that fails a consistency check is answered 200 and counted by check.
    const flagged = { ...record(online.accessToken), payload: gameplayPayload(3, time + 1_000, { maxCombo: 99_999 }) };
    expect((await serverApi.post('/player/upload', flagged)).status).toBe(200);

    // Two unknown paths share one series: unmatched routes do not grow the label set.
    expect((await app.http.get('/no/such/thing')).status).toBe(404);
    expect((await app.http.get('/no/such/other-thing?x=1')).status).toBe(404);

    const samples = await scrape();
    const logins = samples.filter((sample) => sample.name === 'rhythmc_logins_total');
    expect(logins).toHaveLength(6);
    expect(logins.map(({ labels, value }) => ({ ...labels, value }))).toEqual(
      expect.arrayContaining([
        { kind: 'player', mode: '-', result: 'BAD_REQUEST', value: 1 },
        { kind: 'player', mode: 'TOKEN', result: 'SESSION_CONFLICT', value: 1 },
        { kind: 'player', mode: 'TOKEN', result: 'UNAUTHORIZED', value: 1 },
        { kind: 'player', mode: 'TOKEN', result: 'ok', value: 1 },
        { kind: 'server', mode: '-', result: 'UNAUTHORIZED', value: 1 },
        { kind: 'server', mode: '-', result: 'ok', value: 1 },
      ]),
    );
    expect(
      samples
        .filter((sample) => sample.name === 'rhythmc_plays_flagged_total')
        .map(({ labels, value }) => ({ ...labels, value })),
    ).toEqual([
      { check: 'fullCombo', value: 0 },
      { check: 'allPerfect', value: 0 },
      { check: 'maxCombo', value: 1 },
      { check: 'noteCount', value: 0 },
      { check: 'perfectAccuracy', value: 0 },
      { check: 'accuracy', value: 0 },
      { check: 'time', value: 0 },
    ]);
    expect(
      samples
        .filter((sample) => sample.name === 'rhythmc_uploads_total')
        .map(({ labels, value }) => ({ ...labels, value })),
    ).toEqual([
      { result: 'ok', value: 2 },
      { result: 'UNAUTHORIZED', value: 1 },
    ]);

    const requests = (labels: Labels) => valueOf(samples, 'rhythmc_http_requests_total', labels);
    expect(requests({ method: 'POST', route: '/server/login', status: '200' })).toBe(1);
    expect(requests({ method: 'POST', route: '/server/login', status: '401' })).toBe(1);
    expect(requests({ method: 'POST', route: '/player/login', status: '200' })).toBe(1);
    expect(requests({ method: 'POST', route: '/player/login', status: '401' })).toBe(1);
    expect(requests({ method: 'POST', route: '/player/login', status: '409' })).toBe(1);
    expect(requests({ method: 'POST', route: '/player/login', status: '400' })).toBe(1);
    expect(requests({ method: 'POST', route: '/admin/players/:uid/net-token', status: '201' })).toBe(1);
    expect(requests({ method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    // The scrape that answered is not counted, nor any before it.
    expect(samples.some((sample) => sample.labels.route === '/metrics')).toBe(false);
    expect(samples.some((sample) => sample.labels.route?.startsWith('/no/'))).toBe(false);

    const latency = (suffix: string, labels: Labels) =>
      valueOf(samples, `rhythmc_http_request_duration_seconds_${suffix}`, labels);
    const upload = { method: 'POST', route: '/player/upload', status: '200' };
    expect(latency('count', upload)).toBe(2);
    expect(latency('bucket', { ...upload, le: '+Inf' })).toBe(2);
    expect(latency('bucket', { ...upload, le: '0.001' })).toBeLessThanOrEqual(2);
    expect(latency('sum', upload)).toBeGreaterThan(0);
    /** The (le, count) ladder of a histogram's series with these labels. */
    const ladder = (histogram: string, labels: Labels) =>
      samples
        .filter(
          (sample) =>
            sample.name === `${histogram}_bucket` && sameLabels({ ...sample.labels, le: '' }, { ...labels, le: '' }),
        )
        .map((sample) => [sample.labels.le, sample.value]);
    const latencyBuckets = ladder('rhythmc_http_request_duration_seconds', upload).map(([le]) => le);
    expect(latencyBuckets).toEqual([
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '+Inf',
    ]);
    // The two answered uploads' time in the service, split at the commit; the refused one is not counted.
    const phase = (suffix: string, labels: Labels) =>
      valueOf(samples, `rhythmc_upload_phase_seconds_${suffix}`, labels);
    expect(phase('count', { phase: 'store' })).toBe(2);
    expect(phase('count', { phase: 'rank' })).toBe(2);
    // The request latency's buckets, per phase.
    const phaseLadder = (name: string) => ladder('rhythmc_upload_phase_seconds', { phase: name });
    for (const name of ['store', 'rank']) expect(phaseLadder(name).map(([le]) => le)).toEqual(latencyBuckets);
    expect(phaseLadder('rank').at(-1)).toEqual(['+Inf', 2]);
    const storeSeconds = phase('sum', { phase: 'store' }) ?? NaN;
    const rankSeconds = phase('sum', { phase: 'rank' }) ?? NaN;
    // Both phases took time, and together no more than the requests did.
    expect(storeSeconds).toBeGreaterThan(0);
    expect(rankSeconds).toBeGreaterThan(0);
    expect(storeSeconds + rankSeconds).toBeLessThanOrEqual(latency('sum', upload) ?? NaN);

    // Process metrics of Node (collected once per process).
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('reports the build, the database pool, Redis and the rank index', async () => {
    // One ranked player after the first test's upload: the index holds at least that one.
    const [{ ranked }] = await app.sql<{ ranked: number }>(
      'SELECT count(*)::int AS ranked FROM player_rating WHERE atp > 0',
    );
    const samples = await scrape();
    const build = samples.filter((sample) => sample.name === 'rhythmc_build_info');
    expect(build).toHaveLength(1);
    expect(build[0].value).toBe(1);
    expect(build[0].labels).toEqual({
      version: (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string })
        .version,
      commit: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: join(__dirname, '..', '..') })
        .toString()
        .trim(),
      node: process.version,
    });

    const pool = (state: string) => valueOf(samples, 'rhythmc_db_pool_connections', { state }) as number;
    expect(pool('total')).toBeGreaterThanOrEqual(1);
    expect(pool('idle')).toBeLessThanOrEqual(pool('total'));
    expect(pool('waiting')).toBe(0);

    const redis = app.config.redisUrl !== null;
    expect(valueOf(samples, 'rhythmc_redis_up')).toBe(redis ? 1 : undefined);
    const mode = redis ? 'redis' : 'memory';
    expect(
      samples.filter((sample) => sample.name === 'rhythmc_rank_index_ready').map((sample) => sample.labels),
    ).toEqual([{ mode }]);
    expect(valueOf(samples, 'rhythmc_rank_index_ready', { mode })).toBe(1);
    // Redis holds the index of every test app sharing it (one key prefix per run): at least ours.
    const site = valueOf(samples, 'rhythmc_rank_index_entries', { mode, ranking: 'site' }) as number;
    if (redis) expect(site).toBeGreaterThanOrEqual(ranked);
    else expect(site).toBe(ranked);
    expect(valueOf(samples, 'rhythmc_rank_index_entries', { mode, ranking: 'charts' })).toBe(
      redis ? undefined : ranked,
    );
  });

  it('reports the event-loop delay since the previous scrape, the monitor resolution taken off', async () => {
    await scrape();
    // The app runs in this process: a 500 ms busy loop holds its event loop.
    const until = Date.now() + 500;
    while (Date.now() < until) {
      // busy: nothing runs meanwhile
    }
    const blocked = await scrape();
    const stat = (samples: Sample[], name: string) =>
      valueOf(samples, 'rhythmc_event_loop_delay_seconds', { stat: name }) as number;
    expect(stat(blocked, 'max')).toBeGreaterThanOrEqual(0.495);
    expect(stat(blocked, 'max')).toBeLessThan(3);
    expect(stat(blocked, 'p99')).toBeLessThanOrEqual(stat(blocked, 'max'));
    expect(stat(blocked, 'p50')).toBeLessThanOrEqual(stat(blocked, 'p99'));
    // The window starts again at every scrape: the block is gone from the next one. Compared with
    // the block itself, not a fixed bound: the scrape's own queries run on this thread when the
    // database is the embedded one, and a loaded CI machine once made them take 250 ms.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stat(await scrape(), 'max')).toBeLessThan(stat(blocked, 'max'));
  });

  it('reports the live sessions the database holds', async () => {
    const server = await createServer(app);
    const session = await loginServer(app, server);
    await loginPlayer(app, session, await createPlayer(app));
    const ended = await loginPlayer(app, session, await createPlayer(app));
    expect(
      (
        await app.http.post(
          '/player/logout',
          { uid: ended.uid, accessToken: ended.accessToken },
          { token: session.accessToken },
        )
      ).status,
    ).toBe(204);
    // An open session whose token has expired is not live.
    await app.sql(`UPDATE player_session SET token_expires_at = now() - interval '1 minute' WHERE uid = $1`, [
      (await loginPlayer(app, session, await createPlayer(app))).uid,
    ]);

    const inDatabase = await liveSessionsInDatabase();
    // This test's server and the first test's one; the first test's player and this test's first.
    expect(inDatabase).toEqual({ servers: 2, players: 2 });
    const samples = await scrape();
    expect(valueOf(samples, 'rhythmc_server_sessions_live')).toBe(inDatabase.servers);
    expect(valueOf(samples, 'rhythmc_player_sessions_live')).toBe(inDatabase.players);

    // A server logout ends its session and its players' sessions.
    expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(204);
    const after = await scrape();
    expect(await liveSessionsInDatabase()).toEqual({ servers: 1, players: 1 });
    expect(valueOf(after, 'rhythmc_server_sessions_live')).toBe(1);
    expect(valueOf(after, 'rhythmc_player_sessions_live')).toBe(1);
  });

  it('counts the open WebSocket connections of this instance', async () => {
    expect(valueOf(await scrape(), 'rhythmc_websocket_connections')).toBe(0);
    const session = await loginServer(app, await createServer(app));
    const client = await WsClient.connect(app.baseUrl, session.accessToken);
    await waitForValue('rhythmc_websocket_connections', {}, 1);
    client.close();
    await client.closed;
    await waitForValue('rhythmc_websocket_connections', {}, 0);
  });

  describe('with METRICS_TOKEN', () => {
    let guarded: TestApp;
    const metricsToken = 'scrape-token-0123456789abcdef';

    beforeAll(async () => {
      guarded = await startTestApp({ env: { METRICS_TOKEN: metricsToken } });
    });

    afterAll(async () => {
      await guarded?.close();
    });

    it('answers only a scraper presenting that bearer token', async () => {
      expect(await guarded.http.get('/metrics', { token: null })).toMatchObject({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'Invalid metrics token' },
      });
      expect(await guarded.http.get('/metrics', { token: ADMIN_TOKEN })).toMatchObject({
        status: 401,
        body: { error: 'UNAUTHORIZED' },
      });
      expect(await guarded.http.get('/metrics', { token: `${metricsToken}x` })).toMatchObject({
        status: 401,
        body: { error: 'UNAUTHORIZED' },
      });
      const scraped = await guarded.http.get('/metrics', { token: metricsToken });
      expect(scraped.status).toBe(200);
      expect(scraped.text).toContain('# TYPE rhythmc_http_requests_total counter');
    });
  });
});
