import { ReadinessRepository } from '../../src/health/readiness.repository';
import { PROBE_REUSE_MS } from '../../src/health/readiness.service';
import { sleep } from '../support/wait';
import { startTestApp, TestApp } from '../support/test-app';

/** GET /health/ready is public: a flood of it must not become a flood of writes. */
describe('Readiness probe under a flood', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it('answers 200 checks arriving together with one probe write per PROBE_REUSE_MS', async () => {
    await sleep(PROBE_REUSE_MS + 50);
    const writes = jest.spyOn(app.get(ReadinessRepository), 'probeWrite');
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => app.http.get('/health/ready', { token: null })),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200]));
    expect(answers[0].body).toEqual({
      status: 'ok',
      info: { database: { status: 'up' } },
      error: {},
      details: { database: { status: 'up' } },
    });
    // One write per PROBE_REUSE_MS the flood lasted (the client opens its connections over a while), not one per check.
    const windows = Math.floor((Date.now() - started) / PROBE_REUSE_MS) + 1;
    expect(writes.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(writes.mock.calls.length).toBeLessThanOrEqual(Math.min(windows, 50));
    const [{ probed }] = await app.sql<{ probed: boolean }>(
      `SELECT probed_at > now() - interval '10 seconds' AS probed FROM readiness_probe WHERE id = 1`,
    );
    expect(probed).toBe(true);

    // Once the answer is older than PROBE_REUSE_MS, the next check writes again.
    await sleep(PROBE_REUSE_MS + 50);
    const before = writes.mock.calls.length;
    expect((await app.http.get('/health/ready', { token: null })).status).toBe(200);
    expect(writes).toHaveBeenCalledTimes(before + 1);
  });

  it('does not queue a second write behind one that outlived its timeout (a stuck pool)', async () => {
    await sleep(PROBE_REUSE_MS + 50);
    let release: () => void = () => undefined;
    const writes = jest
      .spyOn(app.get(ReadinessRepository), 'probeWrite')
      .mockImplementationOnce(() => new Promise<void>((resolve) => (release = resolve)));
    const first = await app.http.get('/health/ready', { token: null });
    expect({ status: first.status, body: first.body }).toEqual({
      status: 503,
      body: { error: 'UNAVAILABLE', message: 'Service unavailable' },
    });
    // The write is still pending: the next check waits on it rather than sending another (and,
    // the write having taken more than 3 s, fails too).
    const second = app.http.get('/health/ready', { token: null });
    await sleep(200);
    release();
    expect((await second).status).toBe(503);
    expect(writes).toHaveBeenCalledTimes(1);
    // Once it is done, the next check writes again.
    await sleep(PROBE_REUSE_MS + 50);
    expect((await app.http.get('/health/ready', { token: null })).status).toBe(200);
    expect(writes).toHaveBeenCalledTimes(2);
  }, 20_000);

  it('fails the checks that waited on a write slower than the timeout, even once it commits', async () => {
    await sleep(PROBE_REUSE_MS + 50);
    const writes = jest
      .spyOn(app.get(ReadinessRepository), 'probeWrite')
      .mockImplementationOnce(() => new Promise<void>((resolve) => setTimeout(resolve, 3_500)));
    const first = app.http.get('/health/ready', { token: null });
    await sleep(1_000);
    // Its own 3 s would end after the shared write commits (at 3.5 s): the write was too slow all the same.
    const second = app.http.get('/health/ready', { token: null });
    expect([(await first).status, (await second).status]).toEqual([503, 503]);
    expect(writes).toHaveBeenCalledTimes(1);
    await sleep(PROBE_REUSE_MS + 50);
    expect((await app.http.get('/health/ready', { token: null })).status).toBe(200);
    expect(writes).toHaveBeenCalledTimes(2);
  }, 20_000);
});
