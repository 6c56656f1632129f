/**
 * `--smoke`: one game server and one player make every call of interface.md once, in the
 * plugin's order, each with the status it must answer and its body shape checked; plus a few
 * answers that must be errors (409 on a second login, 400 on a bad limit, 401 on an ended
 * session). The first unexpected answer stops the run and is named in one line.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { gameplayRecord } from '../harness/payloads';
import { SIM_PACK_FILE } from './deployment';
import { onlineName } from './identity-provider';
import { Metrics, MetricsReport } from './metrics';
import { Answer, Frame, PluginHttp, PluginSocket, PLUGIN_USER_AGENT } from './plugin-client';
import {
  arrayProblem,
  CHART,
  CHAT_FRAME,
  COLLECTION,
  DOWNLOAD_ENTRY,
  ERROR_BODY,
  MANIFEST_ENTRY,
  PACK_ENTRY,
  PLAYER_PROFILE,
  RANKING_ENTRY,
  SERVER_SESSION,
  Shape,
  shapeProblem,
  UPLOAD_RESULT,
} from './shape';

export interface SmokeTarget {
  url: string;
  adminToken: string;
  /** ONLINE login can be verified (the deployment asks the simulator's identity provider). */
  identityProvider: boolean;
  /** The simulator started the service: it may add a chart, a title and a pack to the catalog. */
  selfStarted: boolean;
  followAdvertised?: boolean;
}

export interface SmokeStep {
  call: string;
  expected: string;
  status: 'ok' | 'failed' | 'skipped';
  got?: string;
  ms?: number;
  problem?: string;
}

export interface SmokeReport {
  ok: boolean;
  steps: SmokeStep[];
  metrics: MetricsReport;
}

class StepFailed extends Error {}

const PLUGIN_VERSION = 1;
const SMOKE_TITLE = 'rhythmc:titles.sim_smoke';
const SMOKE_ASSET = 'rhythmc:assets.sim.smoke';
const SMOKE_LEVEL = 990_001;

export async function runSmoke(
  target: SmokeTarget,
  log: (line: string) => void = () => undefined,
): Promise<SmokeReport> {
  const metrics = new Metrics();
  const steps: SmokeStep[] = [];
  const http = new PluginHttp(target.url, metrics, 4);
  let socket: PluginSocket | null = null;

  const pass = (step: SmokeStep) => {
    steps.push(step);
    log(`ok    ${step.call.padEnd(44)} ${step.got ?? ''}${step.ms === undefined ? '' : ` (${step.ms.toFixed(0)} ms)`}`);
  };
  const fail = (step: SmokeStep): never => {
    steps.push(step);
    log(
      `FAIL  ${step.call}: expected ${step.expected}, got ${step.got ?? '?'}${step.problem ? ` — ${step.problem}` : ''}`,
    );
    throw new StepFailed(step.call);
  };
  const skip = (call: string, why: string) => {
    steps.push({ call, expected: '-', status: 'skipped', problem: why });
    log(`skip  ${call}: ${why}`);
  };

  /** One HTTP call that must answer `expect` with a body of `shape` (and pass `check`). */
  const step = async <T = any>(
    call: string,
    method: string,
    path: string,
    options: {
      token?: string | null;
      body?: unknown;
      expect: number;
      shape?: Shape;
      array?: Shape;
      check?: (body: T) => string | null;
      client?: PluginHttp;
    },
  ): Promise<Answer<T>> => {
    const answer = await (options.client ?? http).call<T>(call, method, path, {
      token: options.token,
      body: options.body,
      expect: [options.expect],
    });
    const got = `${answer.status}`;
    const base = { call, expected: String(options.expect), got, ms: answer.ms };
    if (!answer.ok) return fail({ ...base, status: 'failed', problem: answer.text.slice(0, 300) });
    let problem: string | null = null;
    if (options.expect === 204) problem = answer.text === '' ? null : `a 204 with a body: ${answer.text.slice(0, 100)}`;
    else if (options.expect >= 400) problem = shapeProblem(answer.body, ERROR_BODY);
    if (!problem && options.shape) problem = shapeProblem(answer.body, options.shape);
    if (!problem && options.array) problem = arrayProblem(answer.body, options.array);
    if (!problem && options.check) problem = options.check(answer.body);
    if (problem) return fail({ ...base, status: 'failed', got: `${got} with an unexpected body`, problem });
    pass({ ...base, status: 'ok' });
    return answer;
  };

  try {
    // ---- provisioning through the admin API (decisions.md §8)
    const serverName = `sim-smoke-${randomBytes(4).toString('hex')}`;
    const created = await step<{ serverID: number; bootstrapToken: string }>(
      'POST /admin/servers',
      'POST',
      '/admin/servers',
      {
        token: target.adminToken,
        body: { name: serverName, country: 'DE' },
        expect: 201,
        shape: { serverID: 'integer', serverName: 'string', bootstrapToken: 'string' },
      },
    );
    const uuid = randomUUID();
    const username = onlineName(uuid);
    const player = await step<{ uid: number }>('POST /admin/players', 'POST', '/admin/players', {
      token: target.adminToken,
      body: { username, uuid },
      expect: 201,
      shape: { uid: 'integer', username: 'string', displayName: 'string', uuid: 'string' },
    });
    const uid = player.body.uid;
    const netToken = await step<{ netToken: string }>(
      'POST /admin/players/{uid}/net-token',
      'POST',
      `/admin/players/${uid}/net-token`,
      {
        token: target.adminToken,
        expect: 201,
        shape: { netToken: 'string' },
      },
    );
    if (target.selfStarted) {
      await step('PUT /admin/charts', 'PUT', '/admin/charts', {
        token: target.adminToken,
        body: [
          { levelId: SMOKE_LEVEL, name: 'Simulator chart', difficultyConstant: 12.5, version: '1.0', active: true },
        ],
        expect: 200,
        shape: { upserted: 'integer' },
      });
      await step('PUT /admin/collections', 'PUT', '/admin/collections', {
        token: target.adminToken,
        body: [
          {
            key: SMOKE_TITLE,
            type: 'title',
            unlockMethod: { type: 'MANUAL' },
            properties: { title: '§bSimulated', description: 'smoke', rarity: 'common', position: true },
          },
        ],
        expect: 200,
        shape: { upserted: 'integer' },
      });
      await step('PUT /admin/packs', 'PUT', '/admin/packs', {
        token: target.adminToken,
        body: [
          {
            name: 'sim-pack',
            displayName: 'Simulator pack',
            type: 'FULL',
            availableSongs: [1, 2],
            file: SIM_PACK_FILE,
          },
        ],
        expect: 200,
        shape: { upserted: 'integer' },
      });
    } else {
      skip('PUT /admin/charts, /admin/collections, /admin/packs', 'a deployment given with --url keeps its catalog');
    }

    // ---- the game server starts (interface.md "States and transitions")
    await step('GET /server/ping', 'GET', '/server/ping', {
      expect: 200,
      check: (body) => (body === true ? null : `body is ${JSON.stringify(body)}, expected true`),
    });
    const login = await step<{ accessToken: string; serverID: number; wsServer: string; assetServer: string }>(
      'POST /server/login',
      'POST',
      '/server/login',
      {
        token: created.body.bootstrapToken,
        body: { pluginVersion: PLUGIN_VERSION, pluginSHA: 'simulator' },
        expect: 200,
        shape: SERVER_SESSION,
        check: (body) =>
          !/^wss?:\/\/.+\/ws$/.test(body.wsServer)
            ? `wsServer "${body.wsServer}" is not a ws(s)://…/ws address`
            : !/^https?:\/\//.test(body.assetServer)
              ? `assetServer "${body.assetServer}" is not an http(s) address`
              : null,
      },
    );
    const serverID = login.body.serverID;
    const refreshed = await step<{ accessToken: string }>('GET /server/refresh', 'GET', '/server/refresh', {
      token: login.body.accessToken,
      expect: 200,
      shape: { accessToken: 'string', expiresIn: 'integer' },
      check: (body) => (body.accessToken === login.body.accessToken ? 'the refreshed token equals the old one' : null),
    });
    const token = refreshed.body.accessToken;
    const assets = target.followAdvertised ? new PluginHttp(login.body.assetServer, metrics, 4) : http;

    // Resource sync, collections, pack manifest and charts load in parallel, as the plugin does.
    const [manifest, collections, packs, charts] = await Promise.all([
      step<{ Data: Array<{ path: string }>; Lang: unknown[] }>(
        'GET /resources/manifest?lang=true',
        'GET',
        '/resources/manifest?lang=true',
        {
          token,
          expect: 200,
          shape: { Data: 'array', Lang: 'array' },
          client: assets,
          check: (body) => arrayProblem(body.Data, MANIFEST_ENTRY) ?? arrayProblem(body.Lang, MANIFEST_ENTRY),
        },
      ),
      step<Array<{ key: string }>>('GET /server/collections', 'GET', '/server/collections', {
        token,
        expect: 200,
        array: COLLECTION,
        check: (body) =>
          target.selfStarted && !body.some((c) => c.key === SMOKE_TITLE) ? `${SMOKE_TITLE} is not listed` : null,
      }),
      step<Array<{ name: string }>>('GET /resources/packmanifest', 'GET', '/resources/packmanifest', {
        token,
        expect: 200,
        array: PACK_ENTRY,
        client: assets,
        check: (body) =>
          target.selfStarted && !body.some((p) => p.name === 'sim-pack') ? 'sim-pack is not listed' : null,
      }),
      step<Array<{ levelId: number }>>('GET /server/charts', 'GET', '/server/charts', {
        token,
        expect: 200,
        array: CHART,
        check: (body) =>
          target.selfStarted && !body.some((c) => c.levelId === SMOKE_LEVEL)
            ? `level ${SMOKE_LEVEL} is not listed`
            : null,
      }),
    ]);
    const paths = manifest.body.Data.slice(0, 3).map((entry) => entry.path);
    const downloads = await step<Array<{ path: string; url: string; sha256: string }>>(
      'POST /resources/down',
      'POST',
      '/resources/down',
      {
        token,
        body: paths,
        expect: 200,
        array: DOWNLOAD_ENTRY,
        client: assets,
        check: (body) => (body.length !== paths.length ? `${body.length} entries for ${paths.length} paths` : null),
      },
    );
    if (downloads.body.length > 0) {
      // The download address is fetched without any token (interface.md), and its bytes must match the manifest.
      const entry = downloads.body[0];
      // A link the service signed for its own advertised address is fetched through the address
      // the smoke was given (a test app or a deployment behind another name); CDN links as they are.
      const link = new URL(entry.url);
      if (!target.followAdvertised && link.origin === new URL(login.body.assetServer).origin) {
        const base = new URL(target.url);
        link.protocol = base.protocol;
        link.host = base.host;
      }
      const started = performance.now();
      const base = { call: 'GET resource file (download url)', expected: '200', ms: 0 };
      let response: Response;
      let bytes: Buffer;
      try {
        response = await fetch(link, { headers: { 'User-Agent': PLUGIN_USER_AGENT } });
        bytes = Buffer.from(await response.arrayBuffer());
      } catch (error) {
        metrics.record('GET resource file', 'error', performance.now() - started, true);
        return fail({
          ...base,
          status: 'failed',
          got: 'no answer',
          problem: `${link.toString()}: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
      base.ms = performance.now() - started;
      metrics.record('GET resource file', response.status, base.ms, response.status !== 200);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      if (response.status !== 200) fail({ ...base, status: 'failed', got: String(response.status) });
      if (sha256 !== entry.sha256)
        fail({ ...base, status: 'failed', got: '200 with other bytes', problem: `sha256 ${sha256} ≠ ${entry.sha256}` });
      pass({ ...base, status: 'ok', got: '200' });
    } else {
      skip('GET resource file (download url)', 'the manifest lists no data file');
    }
    const collectionKeys = collections.body.map((c) => c.key);
    void packs;

    const wsUrl = target.followAdvertised ? login.body.wsServer : `${target.url.replace(/^http/, 'ws')}/ws`;
    const wsStarted = performance.now();
    socket = await PluginSocket.connect(wsUrl, token, metrics);
    if (!socket)
      fail({
        call: 'ws connect',
        expected: '101',
        status: 'failed',
        got: 'refused',
        ms: performance.now() - wsStarted,
      });
    pass({ call: 'ws connect', expected: '101', status: 'ok', got: '101', ms: performance.now() - wsStarted });
    const ws = socket as PluginSocket;
    const frames: Frame[] = [];
    ws.onFrame = (frame) => frames.push(frame);

    // ---- the player joins: modes in the plugin's order ONLINE, OFFLINE_REFRESH, TOKEN
    let accessToken: string;
    if (target.identityProvider) {
      const online = await step<{ accessToken: string; uid: number }>(
        'POST /player/login ONLINE',
        'POST',
        '/player/login',
        {
          token,
          body: { mode: 'ONLINE', version: PLUGIN_VERSION, uuid, username },
          expect: 200,
          shape: PLAYER_PROFILE,
          check: (body) => (body.uid !== uid ? `uid ${body.uid}, expected ${uid}` : null),
        },
      );
      accessToken = online.body.accessToken;
    } else {
      skip('POST /player/login ONLINE', 'no identity provider the deployment asks (--idp-port)');
      accessToken = (
        await step<{ accessToken: string }>('POST /player/login TOKEN', 'POST', '/player/login', {
          token,
          body: { mode: 'TOKEN', version: PLUGIN_VERSION, authToken: netToken.body.netToken },
          expect: 200,
          shape: PLAYER_PROFILE,
        })
      ).body.accessToken;
    }
    await step('POST /player/login while logged in', 'POST', '/player/login', {
      token,
      body: { mode: 'TOKEN', version: PLUGIN_VERSION, authToken: netToken.body.netToken },
      expect: 409,
    });

    // ---- the player state sync, then resume_session
    const title = collectionKeys.includes(SMOKE_TITLE) ? SMOKE_TITLE : null;
    if (title) {
      await step('POST /player/collections', 'POST', '/player/collections', {
        token,
        body: { uid, accessToken, collections: [title, SMOKE_ASSET] },
        expect: 204,
      });
    } else {
      await step('POST /player/collections', 'POST', '/player/collections', {
        token,
        body: { uid, accessToken, collections: [SMOKE_ASSET] },
        expect: 204,
      });
    }
    const options = await step<{ resumeToken: string; data: { collections: string[] } }>(
      'POST /player/options',
      'POST',
      '/player/options',
      {
        token,
        body: {
          uid,
          accessToken,
          options: {
            continueEnabled: true,
            sound: { master: 0.8 },
            songSelectionState: { sortMode: 'LEVEL', difficulty: 'END', collection: '', songId: 1, autoPlay: false },
          },
          ...(title ? { playerPrefix: title } : {}),
        },
        expect: 200,
        shape: PLAYER_PROFILE,
        check: (body) =>
          body.resumeToken === ''
            ? 'no resumeToken although continueEnabled is true'
            : !body.data.collections.includes(SMOKE_ASSET)
              ? `${SMOKE_ASSET} missing from data.collections`
              : null,
      },
    );
    let resumeToken = options.body.resumeToken;
    await step('POST /player/economy', 'POST', '/player/economy', {
      token,
      body: { uid, accessToken, wattHour: 4_321 },
      expect: 200,
      shape: { uid: 'integer', wattHour: 'integer' },
      check: (body: any) => (body.wattHour !== 4_321 || body.uid !== uid ? `answered ${JSON.stringify(body)}` : null),
    });
    await step('GET /server/baltop?limit=10', 'GET', '/server/baltop?limit=10', {
      token,
      expect: 200,
      array: RANKING_ENTRY,
    });
    await step('GET /server/baltop?limit=0', 'GET', '/server/baltop?limit=0', { token, expect: 400 });
    // The play counts on the chart the smoke defined, or on the deployment's first listed chart. A
    // deployment that lists none (a fresh one) gets no chart from the smoke (its catalog is the
    // operator's: players would see it): the play goes to SMOKE_LEVEL, which the service stores
    // uncounted on a placeholder chart, and the ranked checks are skipped, saying so.
    const rankedLevel = target.selfStarted ? SMOKE_LEVEL : (charts.body[0]?.levelId ?? null);
    const levelID = rankedLevel ?? SMOKE_LEVEL;
    const time = Date.now();
    if (rankedLevel === null)
      skip(
        'ranked checks of POST /player/upload',
        `the deployment lists no chart (GET /server/charts is empty): the play on level ${SMOKE_LEVEL} is stored uncounted (a placeholder chart), so personal best, ATP and ranks are not checked; define a chart (PUT /admin/charts) to check them`,
      );
    await step('POST /player/upload', 'POST', '/player/upload', {
      token,
      body: gameplayRecord({ uid, accessToken, serverID, serverName, levelID, acc: 99.5, pass: true, time }),
      expect: 200,
      shape: UPLOAD_RESULT,
      check: (body: any) =>
        rankedLevel === null
          ? body.personalBest !== false || body.trackRank !== null || body.siteRank !== null
            ? `a play on a chart the catalog does not have answered ${JSON.stringify(body)}`
            : null
          : body.personalBest !== true || body.siteRank === null || body.trackRank === null
            ? `a first counted play answered ${JSON.stringify(body)}`
            : null,
    });

    const resumeStarted = performance.now();
    const ack = await ws.resume(uid, accessToken);
    const resumeProblem = !ack.ok
      ? JSON.stringify(ack.data)
      : shapeProblem(ack.data, { uid: 'integer', ok: 'boolean', expiresIn: 'integer' });
    const resumeStep = { call: 'ws resume_session', expected: 'ok: true', ms: performance.now() - resumeStarted };
    if (resumeProblem)
      fail({
        ...resumeStep,
        status: 'failed',
        got: ack.ok ? 'ok with an unexpected body' : 'ok: false',
        problem: resumeProblem,
      });
    pass({ ...resumeStep, status: 'ok', got: 'ok: true' });

    const message = `smoke ${randomBytes(3).toString('hex')}`;
    const chatStarted = performance.now();
    ws.chat(uid, message);
    const chat = await waitFor(frames, (frame) => frame.event === 'chat' && frame.data?.message === message, 10_000);
    const chatStep = { call: 'ws chat', expected: 'the chat frame back', ms: performance.now() - chatStarted };
    if (!chat)
      fail({ ...chatStep, status: 'failed', got: `no chat frame; frames: ${JSON.stringify(frames).slice(0, 200)}` });
    const chatProblem =
      shapeProblem(chat?.data, CHAT_FRAME) ??
      (title && chat?.data.prefix?.key !== title
        ? `prefix ${JSON.stringify(chat?.data.prefix)}, expected ${title}`
        : null);
    if (chatProblem)
      fail({ ...chatStep, status: 'failed', got: 'a chat frame with an unexpected body', problem: chatProblem });
    pass({ ...chatStep, status: 'ok', got: 'chat frame' });

    // ---- the player leaves; comes back with the cached resume token; then with the Net Token
    await step('POST /player/logout', 'POST', '/player/logout', { token, body: { uid, accessToken }, expect: 204 });
    const refreshLogin = await step<{ resumeToken: string; accessToken: string }>(
      'POST /player/login OFFLINE_REFRESH',
      'POST',
      '/player/login',
      {
        token,
        body: { mode: 'OFFLINE_REFRESH', version: PLUGIN_VERSION, resumeToken },
        expect: 200,
        shape: PLAYER_PROFILE,
        check: (body) => (body.resumeToken === '' || body.resumeToken === resumeToken ? 'no fresh resumeToken' : null),
      },
    );
    resumeToken = refreshLogin.body.resumeToken;
    await step('POST /player/logout (again)', 'POST', '/player/logout', {
      token,
      body: { uid, accessToken: refreshLogin.body.accessToken },
      expect: 204,
    });
    if (target.identityProvider) {
      await step('POST /player/login TOKEN', 'POST', '/player/login', {
        token,
        body: { mode: 'TOKEN', version: PLUGIN_VERSION, authToken: netToken.body.netToken },
        expect: 200,
        shape: PLAYER_PROFILE,
      });
    } else {
      await step('POST /player/login OFFLINE_REFRESH (again)', 'POST', '/player/login', {
        token,
        body: { mode: 'OFFLINE_REFRESH', version: PLUGIN_VERSION, resumeToken },
        expect: 200,
        shape: PLAYER_PROFILE,
      });
    }

    // ---- the game server shuts down: its session ends, its socket is closed with 4002
    await step('POST /server/logout', 'POST', '/server/logout', { token, expect: 204 });
    const closeStarted = performance.now();
    const closed = await Promise.race([
      ws.closed,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref()),
    ]);
    const closeStep = { call: 'ws closed after server logout', expected: '4002', ms: performance.now() - closeStarted };
    if (closed?.code !== 4002)
      fail({ ...closeStep, status: 'failed', got: closed ? String(closed.code) : 'still open after 10 s' });
    pass({ ...closeStep, status: 'ok', got: '4002' });
    await step('GET /server/refresh after logout', 'GET', '/server/refresh', { token, expect: 401 });
  } catch (error) {
    if (!(error instanceof StepFailed)) {
      const problem = error instanceof Error ? error.message : String(error);
      steps.push({ call: 'simulator', expected: 'no error', status: 'failed', problem });
      log(`FAIL  simulator: ${problem}`);
    }
  } finally {
    socket?.terminate();
    http.destroy();
  }
  metrics.close();
  return { ok: steps.every((s) => s.status !== 'failed'), steps, metrics: metrics.report() };
}

async function waitFor(
  frames: Frame[],
  predicate: (frame: Frame) => boolean,
  timeoutMs: number,
): Promise<Frame | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = frames.find(predicate);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}
