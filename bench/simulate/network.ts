/**
 * The load mode: N game servers with M players each, behaving like the plugin.
 *
 * A server boots with server login, the four catalog loads in parallel (resource manifest,
 * collections, pack manifest, charts), resource downloads on its first boot, and its WebSocket.
 * Players join in the plugin's mode order (ONLINE on online-mode servers; else OFFLINE_REFRESH
 * with a cached resume token, falling back to TOKEN with the Net Token), then sync their state
 * (collections, balance; options once, to turn continueEnabled on) and send resume_session, again
 * every resume interval. Uploads arrive at a fixed network-wide rate (open loop, random online
 * players), each followed now and then by a balance, collection or option sync; players leave
 * and come back (churn); servers chat. A restart logs a server in again without logging out (its
 * old session is replaced and its socket closed with 4002) and logs its players back in. A
 * WebSocket closed with 4001 makes the server refresh its token and reconnect. With a switch rate
 * (proxy switching), all servers are declared one network and online players move to another
 * server of their kind the way a Velocity/BungeeCord proxy moves them: the new server logs the
 * player in first (a handover), then the old one sees the quit and its logout answers 401.
 *
 * Every HTTP call of a server goes through its gate: a refresh or a restart first stops new calls
 * and waits for the running ones, so no call races its own server's token change (which would be
 * a simulator artefact, not a service error).
 */
import { randomBytes } from 'node:crypto';
import { AdminApi } from '../harness/api';
import { generatedPlayerUuid } from '../harness/generate';
import { gameplayRecord, randomPlay } from '../harness/payloads';
import { onlineName } from './identity-provider';
import { Metrics } from './metrics';
import { SIM_PACK_FILE } from './deployment';
import { Answer, CallOptions, Frame, PluginHttp, PluginSocket } from './plugin-client';
import { randomUuidFrom, seededRandom } from './rng';

export interface NetworkOptions {
  urls: string[];
  adminToken: string;
  identityProvider: boolean;
  servers: number;
  players: number;
  resumeInterval: number;
  onlineShare: number;
  loginConcurrency: number;
  existingPlayers: number;
  churn: number;
  chatPerMinute: number;
  /** Share of online players that move to another server of the network per minute (0: no switching). */
  switchPerMinute?: number;
  seed: number;
  /** Uploads per second over the network (changeable while running). */
  uploadRate: number;
  followAdvertised: boolean;
  /** Chance that an accepted upload is followed by a balance sync, a collection sync, an option sync. */
  economyPerUpload?: number;
  collectionsPerUpload?: number;
  optionsPerUpload?: number;
  /** Resource paths a server downloads on its first boot. */
  downloadsOnFirstBoot?: number;
  /**
   * The pack-link check: provision a pack (SIM_PACK_FILE must be in the service's RESOURCE_DIR),
   * and on every player join fetch (HEAD) the pack URL the server got at its login, as the plugin
   * hands it to joining players for as long as it runs.
   */
  packLinks?: boolean;
}

type PlayerState = 'away' | 'joining' | 'online' | 'leaving' | 'kicked' | 'switching';

interface SimPlayer {
  index: number;
  server: SimServer;
  uid: number | null;
  uuid: string | null;
  name: string;
  netToken: string | null;
  state: PlayerState;
  accessToken: string;
  /** The plugin's resume-token cache (survives a plugin reload). */
  resumeToken: string;
  continueEnabled: boolean;
  wattHour: number;
  unlocked: string[];
  nextResumeAt: number;
  returnAt: number;
  lastTime: number;
  /** Position in Network.online (swap-remove), -1 when not online. */
  slot: number;
  /** Calls of this player running now. */
  busy: number;
  /** The last token events of this player (what an unexpected answer is recorded with). */
  log: string[];
}

interface SimServer {
  index: number;
  name: string;
  bootstrapToken: string;
  http: PluginHttp;
  baseUrl: string;
  onlineMode: boolean;
  serverID: number;
  token: string;
  wsUrl: string;
  /** The pack URL of the pack manifest loaded at the server's login (the pack-link check). */
  packUrl: string | null;
  socket: PluginSocket | null;
  state: 'down' | 'booting' | 'up' | 'stopped';
  paused: boolean;
  inFlight: number;
  boots: number;
  /** Bumped by every successful server login: player calls started under an older session are not sent. */
  session: number;
  /** Restarts and recoveries of this server run one after the other. */
  lock: Promise<void>;
  /** A socket whose 4002 close is expected (the session it belonged to was replaced on purpose). */
  replacedSocket: PluginSocket | null;
  players: SimPlayer[];
  joinQueue: SimPlayer[];
  joining: number;
  /** The last token events of this server. */
  log: string[];
}

export interface BurstResult {
  servers: number;
  players: number;
  /** From the restart until every server is logged in, its catalogs loaded and its socket open. */
  serversUpMs: number;
  /** From the restart until every player that was online has logged in again. */
  loginsMs: number;
  /** …and has synced its state and had its resume_session acknowledged. */
  syncedMs: number;
  failedLogins: number;
}

const PLUGIN_VERSION = 1;
/** The pack the pack-link check provisions. */
const SIM_PACK = 'sim-pack';
const TICK_MS = 1_000;
const UPLOAD_TICK_MS = 10;
const MAX_UPLOADS_IN_FLIGHT = 2_000;

export class Network {
  readonly metrics = new Metrics();
  private readonly random: () => number;
  private readonly runTag = randomBytes(4).toString('hex');
  private readonly startedMs = performance.now();
  private readonly servers: SimServer[] = [];
  private readonly online: SimPlayer[] = [];
  private tickTimer: NodeJS.Timeout | null = null;
  private uploadTimer: NodeJS.Timeout | null = null;
  private uploadRate: number;
  private uploadClock = { startedMs: 0, issued: 0 };
  private uploadsInFlight = 0;
  private catalogKeys: string[] = [];
  private stopped = false;
  /** start() has logged everyone in: proxy switches may begin (they move players between the servers' lists). */
  private started = false;
  /** Upload accounting of the whole run (the metrics hold their answers). */
  readonly uploads = { offered: 0, issued: 0, noPlayer: 0, dropped: 0 };
  /**
   * Proxy switches of the run: started, and done (logged in on the new server, then logged out of
   * the old one with the old token; a switch whose old server stopped meanwhile is not done).
   */
  readonly switches = { started: 0, done: 0 };
  /** The pack-link check: fetches of a boot-time pack URL, and the age of the oldest URL that still answered 200. */
  readonly packLinks = { checks: 0, oldestOkSeconds: 0 };
  /** When each pack URL was first handed out (a restart gets the same URL while the pack is unchanged). */
  private readonly packUrlSeen = new Map<string, number>();

  constructor(
    private readonly options: NetworkOptions,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.random = seededRandom(options.seed);
    this.uploadRate = options.uploadRate;
  }

  get onlinePlayers(): number {
    return this.online.length;
  }

  get totalPlayers(): number {
    return this.servers.reduce((sum, server) => sum + server.players.length, 0);
  }

  // ------------------------------------------------------------------ provisioning

  /** Registers the servers and prepares the players through the admin API (decisions.md §8). */
  async provision(): Promise<void> {
    const { servers, players, existingPlayers } = this.options;
    const admin = new AdminApi(this.options.urls[0], this.options.adminToken);
    const started = Date.now();
    const total = servers * players;
    const onlineServers = this.options.identityProvider ? Math.round(servers * this.options.onlineShare) : 0;
    await inBatches(servers, 8, async (i) => {
      const name = `sim-${this.runTag}-${i}`;
      const created = await admin.createServer(name, 'DE');
      const baseUrl = this.options.urls[i % this.options.urls.length];
      const server: SimServer = {
        index: i,
        name,
        bootstrapToken: created.bootstrapToken,
        http: new PluginHttp(baseUrl, this.metrics, 8),
        baseUrl,
        onlineMode: i < onlineServers,
        serverID: created.serverID,
        token: '',
        wsUrl: `${baseUrl.replace(/^http/, 'ws')}/ws`,
        packUrl: null,
        socket: null,
        state: 'down',
        paused: false,
        inFlight: 0,
        boots: 0,
        session: 0,
        lock: Promise.resolve(),
        replacedSocket: null,
        players: [],
        joinQueue: [],
        log: [],
        joining: 0,
      };
      this.servers[i] = server;
    });
    // Identities: generated players 1..N spread over the whole range, or players created for this run.
    const idRandom = seededRandom(this.options.seed ^ Number.parseInt(this.runTag, 16));
    const prepared: SimPlayer[] = [];
    for (const server of this.servers) {
      for (let j = 0; j < players; j++) {
        const index = server.index * players + j;
        const uid = existingPlayers > 0 ? 1 + Math.floor((index * existingPlayers) / total) : null;
        const uuid = server.onlineMode ? (uid !== null ? generatedPlayerUuid(uid) : randomUuidFrom(idRandom)) : null;
        const player: SimPlayer = {
          index,
          server,
          uid,
          uuid,
          name: uuid ? onlineName(uuid) : `sim_${this.runTag}_${index}`,
          netToken: null,
          state: 'away',
          accessToken: '',
          resumeToken: '',
          continueEnabled: false,
          wattHour: Math.floor(this.random() * 100_000),
          unlocked: [],
          nextResumeAt: 0,
          // Not before start() logs it in (the tick must not race the first logins).
          returnAt: Number.POSITIVE_INFINITY,
          lastTime: 0,
          slot: -1,
          busy: 0,
          log: [],
        };
        server.players.push(player);
        prepared.push(player);
      }
    }
    // Players of offline-mode servers log in with a Net Token, issued through the admin API.
    const tokenPlayers = prepared.filter((player) => !player.server.onlineMode);
    await inBatches(tokenPlayers.length, 16, async (k) => {
      const player = tokenPlayers[k];
      if (player.uid === null) player.uid = (await admin.createPlayer({ username: player.name })).uid;
      player.netToken = await admin.netToken(player.uid);
    });
    if ((this.options.switchPerMinute ?? 0) > 0) await admin.putSessionHandover({ mode: 'all' });
    if (this.options.packLinks)
      await admin.putPacks([
        { name: SIM_PACK, displayName: 'Simulator pack', type: 'FULL', availableSongs: [1, 2], file: SIM_PACK_FILE },
      ]);
    this.log(
      `provisioned ${servers} servers (${onlineServers} in online mode) and ${total} players (${tokenPlayers.length} with Net Tokens${existingPlayers > 0 ? `, existing uids of 1..${existingPlayers}` : ''}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }

  // ------------------------------------------------------------------ running

  /** Boots every server and logs every player in; then the ticks (resumes, churn, chat, uploads) run. */
  async start(): Promise<{ ms: number }> {
    const started = performance.now();
    // The ticks run from the start, so players online early keep their resume interval while the others log in.
    this.tickTimer ??= setInterval(() => this.tick(), TICK_MS);
    await Promise.all(this.servers.map((server) => this.bootServer(server)));
    this.log(`servers up in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await Promise.all(this.servers.map((server) => this.joinAll(server.players)));
    const ms = performance.now() - started;
    this.started = true;
    this.log(`${this.online.length} of ${this.totalPlayers} players online in ${(ms / 1000).toFixed(1)} s`);
    this.setUploadRate(this.uploadRate);
    return { ms };
  }

  /** Changes the offered upload rate from now on (uploads per second, whole network). */
  setUploadRate(rate: number): void {
    this.uploadRate = rate;
    this.uploadClock = { startedMs: performance.now(), issued: 0 };
    if (this.uploadTimer === null && !this.stopped)
      this.uploadTimer = setInterval(() => this.uploadTick(), UPLOAD_TICK_MS);
  }

  /**
   * Changes the resume_session interval from now on (the sizing benchmark shortens it to measure
   * what a resume costs): every online player's next resume is spread anew over one interval.
   */
  setResumeInterval(seconds: number): void {
    this.options.resumeInterval = seconds;
    const now = Date.now();
    for (const player of this.online) player.nextResumeAt = now + seconds * 1000 * this.random();
  }

  /** Restarts servers at once (all by default): a new login replaces each session; their players log in again. */
  async restart(servers: number = this.servers.length): Promise<BurstResult> {
    // A seeded pick across the network, so online- and offline-mode servers both get restarted.
    const chosen = this.servers
      .filter((server) => server.state === 'up')
      .map((server) => ({ server, key: this.random() }))
      .sort((a, b) => a.key - b.key)
      .slice(0, servers)
      .map(({ server }) => server);
    const started = performance.now();
    let serversUpMs = 0;
    let syncedMs = 0;
    let loginsMs = 0;
    let players = 0;
    let failedLogins = 0;
    await Promise.all(
      chosen.map((server) =>
        this.exclusive(server, async () => {
          if (server.state !== 'up') return;
          server.paused = true;
          await this.drain(server);
          const online = server.players.filter((player) => player.state === 'online');
          players += online.length;
          for (const player of online) this.setState(player, 'joining');
          // The restarted plugin has not closed the old socket: the new login must close it with 4002.
          server.replacedSocket = server.socket;
          server.socket = null;
          server.state = 'down';
          server.paused = false;
          await this.bootServer(server);
          serversUpMs = Math.max(serversUpMs, performance.now() - started);
          await this.joinAll(online, (ok) => {
            if (!ok) failedLogins++;
            loginsMs = Math.max(loginsMs, performance.now() - started);
          });
          syncedMs = Math.max(syncedMs, performance.now() - started);
        }),
      ),
    );
    return { servers: chosen.length, players, serversUpMs, loginsMs, syncedMs, failedLogins };
  }

  /** Runs `work` for the server after any restart or recovery of it already running: they must not interleave. */
  private async exclusive(server: SimServer, work: () => Promise<void>): Promise<void> {
    const previous = server.lock;
    let release = () => undefined as void;
    server.lock = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      await work();
    } finally {
      release();
    }
  }

  /** Stops the ticks, waits for running calls, logs the servers out (ending their sessions) and closes everything. */
  async stop(options: { logoutPlayers?: boolean } = {}): Promise<void> {
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.uploadTimer) clearInterval(this.uploadTimer);
    this.tickTimer = null;
    this.uploadTimer = null;
    await Promise.all(
      this.servers.map(async (server) => {
        await this.drain(server);
        if (server.state !== 'up') return;
        if (options.logoutPlayers) {
          const online = server.players.filter((player) => player.state === 'online');
          await inBatches(online.length, this.options.loginConcurrency, (k) => this.leave(online[k], false));
        }
        server.state = 'stopped';
        const socket = server.socket;
        server.replacedSocket = socket;
        await server.http.call('POST /server/logout', 'POST', '/server/logout', { token: server.token, expect: [204] });
        // The logout closes the socket with 4002; wait for it rather than cutting it first.
        if (socket) await Promise.race([socket.closed, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      }),
    );
    for (const server of this.servers) {
      server.state = 'stopped';
      server.socket?.terminate();
      server.replacedSocket?.terminate();
      server.http.destroy();
    }
    this.metrics.close();
  }

  // ------------------------------------------------------------------ servers

  /** A call of this server through its gate, with its current token. */
  private async request<T = any>(
    server: SimServer,
    name: string,
    method: string,
    path: string,
    options: CallOptions = {},
  ): Promise<Answer<T>> {
    while (server.paused) await sleep(10);
    server.inFlight++;
    const sentWith = server.token;
    try {
      return await server.http.call<T>(name, method, path, {
        token: () => server.token,
        retries429: 5,
        // A refresh makes the old token stop working at once: a call that was on its way with it is sent again with the new one.
        retryIf: (answer) =>
          answer.status === 401 && server.token !== sentWith ? 'server token refreshed meanwhile' : null,
        context: () => `server ${server.name} [${server.log.join(', ')}]`,
        ...options,
      });
    } finally {
      server.inFlight--;
    }
  }

  private async drain(server: SimServer): Promise<void> {
    const deadline = Date.now() + 300_000;
    while (server.inFlight > 0 && Date.now() < deadline) await sleep(10);
  }

  /** Server login, the catalogs in parallel, downloads on the first boot, the WebSocket. Retries until up (or stopped). */
  private async bootServer(server: SimServer): Promise<void> {
    server.state = 'booting';
    for (let attempt = 0; !this.stopped; attempt++) {
      if (attempt > 0) await sleep(Math.min(30_000, 1_000 * 2 ** attempt));
      const login = await server.http.call<{
        accessToken: string;
        serverID: number;
        wsServer: string;
        assetServer: string;
      }>('POST /server/login', 'POST', '/server/login', {
        token: server.bootstrapToken,
        body: { pluginVersion: PLUGIN_VERSION, pluginSHA: 'simulator' },
        retries429: 5,
      });
      if (!login.ok) continue;
      this.note(server, `login s${server.session + 1}`);
      server.session++;
      server.token = login.body.accessToken;
      server.serverID = login.body.serverID;
      if (this.options.followAdvertised) server.wsUrl = login.body.wsServer;
      const [manifest, collections, packs] = await Promise.all([
        this.request<{ Data: Array<{ path: string }> }>(
          server,
          'GET /resources/manifest',
          'GET',
          '/resources/manifest?lang=true',
        ),
        this.request<Array<{ key: string }>>(server, 'GET /server/collections', 'GET', '/server/collections'),
        this.request<Array<{ name: string; url: string }>>(
          server,
          'GET /resources/packmanifest',
          'GET',
          '/resources/packmanifest',
        ),
        this.request(server, 'GET /server/charts', 'GET', '/server/charts'),
      ]);
      // A failed catalog puts the plugin in offline mode; the simulator counts it and carries on.
      if (collections.ok && this.catalogKeys.length === 0) this.catalogKeys = collections.body.map((c) => c.key);
      if (this.options.packLinks && packs.ok) {
        server.packUrl = packs.body.find((pack) => pack.name === SIM_PACK)?.url ?? null;
        if (server.packUrl && !this.packUrlSeen.has(server.packUrl))
          this.packUrlSeen.set(server.packUrl, performance.now());
      }
      const downloads = this.options.downloadsOnFirstBoot ?? 10;
      if (server.boots === 0 && manifest.ok && downloads > 0 && manifest.body.Data.length > 0) {
        await this.request(server, 'POST /resources/down', 'POST', '/resources/down', {
          body: manifest.body.Data.slice(0, downloads).map((entry) => entry.path),
        });
      }
      if (!(await this.connect(server))) continue;
      server.boots++;
      server.state = 'up';
      return;
    }
  }

  private async connect(server: SimServer): Promise<boolean> {
    const socket = await PluginSocket.connect(server.wsUrl, server.token, this.metrics);
    if (!socket) return false;
    server.socket = socket;
    socket.onFrame = (frame) => this.onFrame(server, frame);
    void socket.closed.then(({ code }) => this.onClose(server, socket, code));
    return true;
  }

  private onFrame(server: SimServer, frame: Frame): void {
    if (frame.event === 'error') {
      this.metrics.record(
        'ws error frame',
        String(frame.data?.error ?? '?'),
        0,
        true,
        String(frame.data?.message ?? ''),
      );
    } else if (frame.event === 'kick_player' && frame.data?.reason === 'handover') {
      // The player moved on (the simulator has already moved it to its new server).
      this.metrics.event('kick_player handover');
    } else if (frame.event === 'kick_player') {
      const player = server.players.find((p) => p.uid === Number(frame.data?.uid));
      if (player) {
        this.note(player, 'kicked');
        this.setState(player, 'kicked');
      }
    }
  }

  private onClose(server: SimServer, socket: PluginSocket, code: number): void {
    const expected = socket === server.replacedSocket;
    this.note(server, `ws close ${code}`);
    this.metrics.event(`ws close ${code}${expected ? ' (replaced on purpose)' : ''}`);
    if (expected) {
      if (code !== 4002) this.metrics.record('ws close of a replaced session', code, 0, true, 'expected 4002');
      server.replacedSocket = null;
      return;
    }
    if (socket !== server.socket || this.stopped || server.state !== 'up') return;
    server.socket = null;
    void this.recover(server, code);
  }

  /**
   * 4001: refresh at once (new calls wait; calls on their way with the old token are sent again)
   * and reconnect. 4002 (session ended elsewhere) or a failed refresh: full boot, players log in again.
   */
  private recover(server: SimServer, code: number): Promise<void> {
    return this.exclusive(server, async () => {
      // A restart that ran meanwhile has already given the server a new session and socket.
      if (server.socket !== null || server.state !== 'up' || this.stopped) return;
      server.paused = true;
      if (code !== 4002) {
        const refreshed = await server.http.call<{ accessToken: string }>(
          'GET /server/refresh',
          'GET',
          '/server/refresh',
          { token: server.token },
        );
        this.note(server, `refresh ${refreshed.status}`);
        if (refreshed.ok) {
          server.token = refreshed.body.accessToken;
          server.paused = false;
          if (await this.connect(server)) return;
          server.paused = true;
        }
      }
      await this.drain(server);
      const players = server.players.filter((player) => player.state === 'online');
      for (const player of players) this.setState(player, 'joining');
      server.paused = false;
      server.state = 'down';
      await this.bootServer(server);
      await this.joinAll(players);
    });
  }

  // ------------------------------------------------------------------ players

  private setState(player: SimPlayer, state: PlayerState): void {
    if (player.state === 'online' && state !== 'online') {
      const last = this.online.pop() as SimPlayer;
      if (last !== player) {
        this.online[player.slot] = last;
        last.slot = player.slot;
      }
      player.slot = -1;
    } else if (player.state !== 'online' && state === 'online') {
      player.slot = this.online.length;
      this.online.push(player);
    }
    player.state = state;
  }

  /** Logs players in, at most loginConcurrency at a time for this server; `loggedIn` hears each login answer. */
  private async joinAll(players: SimPlayer[], loggedIn?: (ok: boolean) => void): Promise<void> {
    // A copy: a proxy switch moves players out of their server's list while this runs.
    const list = [...players];
    await inBatches(list.length, this.options.loginConcurrency, async (k) => {
      await this.join(list[k], loggedIn);
    });
  }

  /**
   * A player's call, made only while the server session it started under is still the current one
   * and the player is in one of `allowed` states (else null, nothing sent): a restart or a logout
   * that overtook it would make the answer a simulator artefact.
   */
  private async playerCall<T = any>(
    player: SimPlayer,
    session: number,
    name: string,
    path: string,
    body: unknown,
    allowed: PlayerState[],
    expect?: number[],
  ): Promise<Answer<T> | null> {
    const server = player.server;
    while (server.paused) await sleep(10);
    if (server.session !== session || !allowed.includes(player.state)) return null;
    player.busy++;
    try {
      return await this.request<T>(server, name, 'POST', path, {
        body,
        expect,
        context: () =>
          `player ${player.uid ?? '?'} ${player.state} [${player.log.join(', ')}] | server ${server.name} [${server.log.join(', ')}]`,
      });
    } finally {
      player.busy--;
    }
  }

  /** The plugin's player login: ONLINE, OFFLINE_REFRESH, TOKEN in that order; then the state sync and resume_session. */
  private async join(player: SimPlayer, loggedIn?: (ok: boolean) => void): Promise<boolean> {
    const server = player.server;
    if (server.state !== 'up' || player.state === 'kicked' || player.state === 'leaving') {
      loggedIn?.(false);
      return false;
    }
    const session = server.session;
    const joining: PlayerState[] = ['joining'];
    this.setState(player, 'joining');
    let profile: Answer | null = null;
    let sent = true;
    if (server.onlineMode && player.uuid) {
      profile = await this.playerCall(
        player,
        session,
        'POST /player/login ONLINE',
        '/player/login',
        { mode: 'ONLINE', version: PLUGIN_VERSION, uuid: player.uuid, username: player.name },
        joining,
      );
      sent = profile !== null;
    } else {
      if (player.resumeToken) {
        // A resume token can have run out or been replaced; 401 then sends the plugin on to TOKEN.
        const refreshed = await this.playerCall(
          player,
          session,
          'POST /player/login OFFLINE_REFRESH',
          '/player/login',
          { mode: 'OFFLINE_REFRESH', version: PLUGIN_VERSION, resumeToken: player.resumeToken },
          joining,
          [200, 401],
        );
        sent = refreshed !== null;
        if (refreshed?.status === 200) profile = refreshed;
        else if (refreshed) player.resumeToken = '';
      }
      if (sent && !profile) {
        profile = await this.playerCall(
          player,
          session,
          'POST /player/login TOKEN',
          '/player/login',
          { mode: 'TOKEN', version: PLUGIN_VERSION, authToken: player.netToken },
          joining,
        );
        sent = profile !== null;
      }
    }
    this.note(player, `login ${profile?.status ?? 'not sent'}`);
    loggedIn?.(profile?.status === 200);
    if (profile?.status !== 200) {
      if (player.state === 'joining') this.setState(player, 'away');
      // Not sent: the server restarted meanwhile, so try again at once; 409: the plugin asks the player to wait a minute.
      player.returnAt = sent ? Date.now() + 65_000 : Date.now();
      return false;
    }
    this.applyProfile(player, profile.body);
    const uid = player.uid as number;
    // The player state sync: options once (the player turns "continue" on), then unlocks and balance.
    if (!server.onlineMode && !player.continueEnabled) {
      const options = await this.playerCall(
        player,
        session,
        'POST /player/options',
        '/player/options',
        { uid, accessToken: player.accessToken, options: { continueEnabled: true } },
        joining,
      );
      if (options?.ok) this.applyProfile(player, options.body);
    }
    if (player.unlocked.length === 0) player.unlocked = this.someCatalogKeys(3);
    await this.playerCall(
      player,
      session,
      'POST /player/collections',
      '/player/collections',
      { uid, accessToken: player.accessToken, collections: player.unlocked },
      joining,
      [204],
    );
    await this.playerCall(
      player,
      session,
      'POST /player/economy',
      '/player/economy',
      { uid, accessToken: player.accessToken, wattHour: player.wattHour },
      joining,
    );
    const ack = server.session === session && player.state === 'joining' ? await this.resume(player) : false;
    if (server.session !== session || player.state !== 'joining') {
      if (player.state === 'joining') {
        this.setState(player, 'away');
        player.returnAt = Date.now();
      }
      return false;
    }
    this.setState(player, 'online');
    if (this.options.packLinks) await this.fetchPack(server);
    return ack;
  }

  /** The joining player downloads the pack from the URL its server got at login (HEAD: the same checks, no body). */
  private async fetchPack(server: SimServer): Promise<void> {
    const url = server.packUrl;
    if (url === null) {
      this.metrics.record('pack url from server login', 'missing', 0, true, `server ${server.name} has no pack URL`);
      return;
    }
    const answer = await server.http.call('HEAD pack url (from server login)', 'HEAD', url, { expect: [200] });
    this.packLinks.checks++;
    if (answer.ok)
      this.packLinks.oldestOkSeconds = Math.max(
        this.packLinks.oldestOkSeconds,
        (performance.now() - (this.packUrlSeen.get(url) ?? performance.now())) / 1000,
      );
  }

  /** Keeps the last 8 token events of a player or a server, stamped with seconds into the run. */
  private note(target: { log: string[] }, event: string): void {
    target.log.push(`${((performance.now() - this.startedMs) / 1000).toFixed(1)}s ${event}`);
    if (target.log.length > 8) target.log.shift();
  }

  private applyProfile(player: SimPlayer, body: any): void {
    player.uid = Number(body.uid);
    player.accessToken = String(body.accessToken);
    player.continueEnabled = body.options?.continueEnabled === true;
    // The plugin clears its cache when a login or option sync succeeds without a resume token.
    player.resumeToken = typeof body.resumeToken === 'string' ? body.resumeToken : '';
  }

  private async resume(player: SimPlayer): Promise<boolean> {
    const server = player.server;
    const socket = server.socket;
    // No socket (reconnecting after 4001): try again at the next tick rather than a whole interval later.
    if (!socket) return false;
    player.nextResumeAt = Date.now() + this.options.resumeInterval * 1000 * (0.9 + 0.2 * this.random());
    server.inFlight++;
    try {
      this.note(player, 'resume sent');
      const ack = await socket.resume(player.uid as number, player.accessToken);
      this.note(player, `resume ${ack.ok ? 'ok' : String(ack.data?.error ?? 'failed')}`);
      // A session the service no longer knows: the plugin logs the player in again. (An ack that
      // did not come in time is only counted: the plugin sends the next one at the next interval.)
      if (!ack.ok && ack.data?.error === 'UNAUTHORIZED' && player.state === 'online' && socket.open) {
        this.setState(player, 'away');
        player.returnAt = Date.now();
      }
      return ack.ok;
    } finally {
      server.inFlight--;
    }
  }

  /** The player leaves: its running calls finish first (the plugin does not sync a player who left), then logout. */
  private async leave(player: SimPlayer, comeBack = true): Promise<void> {
    const session = player.server.session;
    this.setState(player, 'leaving');
    // Unbounded on purpose: a call still queued would otherwise reach the service after the logout.
    while (player.busy > 0) await sleep(10);
    this.note(player, 'leave');
    await this.playerCall(
      player,
      session,
      'POST /player/logout',
      '/player/logout',
      { uid: player.uid, accessToken: player.accessToken },
      ['leaving'],
      [204],
    );
    if (player.state === 'leaving') player.state = 'away';
    player.returnAt = comeBack ? Date.now() + 30_000 + this.random() * 90_000 : Number.POSITIVE_INFINITY;
  }

  /**
   * A proxy moves the player to another server of the network: the new server's login comes
   * first (it takes the session over), then the old server sees the quit and logs the player out
   * with the old token, which the handover already ended (401).
   */
  private async switchServer(player: SimPlayer): Promise<void> {
    const from = player.server;
    const candidates = this.servers.filter(
      (server) => server !== from && server.state === 'up' && !server.paused && server.onlineMode === from.onlineMode,
    );
    if (candidates.length === 0) return;
    const to = candidates[Math.floor(this.random() * candidates.length)];
    this.switches.started++;
    this.setState(player, 'switching');
    // The player's running calls on the old server finish first (a proxy switch takes a moment too).
    while (player.busy > 0) await sleep(10);
    const oldToken = player.accessToken;
    const oldSession = from.session;
    from.players.splice(from.players.indexOf(player), 1);
    to.players.push(player);
    player.server = to;
    this.note(player, `switch ${from.index} -> ${to.index}`);
    this.setState(player, 'away');
    const joined = await this.join(player);
    if (from.state === 'up' && from.session === oldSession) {
      await this.request(from, 'POST /player/logout (after a handover)', 'POST', '/player/logout', {
        body: { uid: player.uid, accessToken: oldToken },
        expect: player.accessToken !== oldToken ? [401] : [204, 401],
      });
      // Counted once the whole switch happened: a count read while a switch is between its two
      // calls (the run stopping) must not be ahead of the logouts.
      if (joined) this.switches.done++;
    }
  }

  private someCatalogKeys(count: number): string[] {
    const keys = new Set<string>([`rhythmc:assets.sim.p${Math.floor(this.random() * 50)}`]);
    for (let i = 0; i < count && this.catalogKeys.length > 0; i++)
      keys.add(this.catalogKeys[Math.floor(this.random() * this.catalogKeys.length)]);
    return [...keys];
  }

  // ------------------------------------------------------------------ ticks

  private tick(): void {
    const now = Date.now();
    for (const server of this.servers) {
      if (server.state !== 'up' || server.paused) continue;
      for (const player of server.players) {
        if (player.state === 'online') {
          if (player.nextResumeAt <= now) void this.resume(player);
          else if (this.random() < this.options.churn / 60) void this.leave(player);
          else if (this.started && this.random() < (this.options.switchPerMinute ?? 0) / 60)
            void this.switchServer(player);
        } else if (player.state === 'away' && player.returnAt <= now) {
          void this.joinAll([player]);
        }
      }
      if (this.random() < this.options.chatPerMinute / 60) {
        const speaker = server.players.find((p) => p.state === 'online');
        if (speaker && server.socket)
          server.socket.chat(speaker.uid as number, `gg ${Math.floor(this.random() * 1000)}`);
      }
    }
  }

  /** Open loop: as many uploads as the rate says are due, each for a random online player. */
  private uploadTick(): void {
    if (this.stopped || this.uploadRate <= 0) return;
    const due = Math.floor(((performance.now() - this.uploadClock.startedMs) / 1000) * this.uploadRate);
    for (; this.uploadClock.issued < due; this.uploadClock.issued++) {
      this.uploads.offered++;
      if (this.uploadsInFlight >= MAX_UPLOADS_IN_FLIGHT) {
        this.uploads.dropped++;
        continue;
      }
      const player = this.online.length > 0 ? this.online[Math.floor(this.random() * this.online.length)] : null;
      if (!player || player.server.paused) {
        this.uploads.noPlayer++;
        continue;
      }
      this.uploads.issued++;
      this.uploadsInFlight++;
      void this.upload(player).finally(() => this.uploadsInFlight--);
    }
  }

  private async upload(player: SimPlayer): Promise<void> {
    const server = player.server;
    const session = server.session;
    const uid = player.uid as number;
    const online: PlayerState[] = ['online'];
    player.lastTime = Math.max(Date.now(), player.lastTime + 1);
    const play = randomPlay(this.random);
    const answer = await this.playerCall(
      player,
      session,
      'POST /player/upload',
      '/player/upload',
      gameplayRecord({
        uid,
        accessToken: player.accessToken,
        serverID: server.serverID,
        serverName: server.name,
        ...play,
        time: player.lastTime,
      }),
      online,
    );
    if (!answer?.ok) return;
    // What a finished song tends to change in the plugin: the balance, sometimes an unlock, rarely an option.
    if (this.random() < (this.options.economyPerUpload ?? 0.5)) {
      player.wattHour += 10 + Math.floor(this.random() * 500);
      await this.playerCall(
        player,
        session,
        'POST /player/economy',
        '/player/economy',
        { uid, accessToken: player.accessToken, wattHour: player.wattHour },
        online,
      );
    }
    if (this.random() < (this.options.collectionsPerUpload ?? 0.1)) {
      const key = `rhythmc:assets.sim.p${Math.floor(this.random() * 50)}`;
      if (!player.unlocked.includes(key)) player.unlocked.push(key);
      await this.playerCall(
        player,
        session,
        'POST /player/collections',
        '/player/collections',
        { uid, accessToken: player.accessToken, collections: player.unlocked },
        online,
        [204],
      );
    }
    if (this.random() < (this.options.optionsPerUpload ?? 0.02)) {
      const options = await this.playerCall(
        player,
        session,
        'POST /player/options',
        '/player/options',
        {
          uid,
          accessToken: player.accessToken,
          options: {
            songSelectionState: {
              sortMode: 'LEVEL',
              songId: play.levelID,
              difficulty: 'END',
              collection: '',
              autoPlay: false,
            },
          },
        },
        online,
      );
      if (options?.ok) this.applyProfile(player, options.body);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs work(0..count-1) with at most `concurrency` at a time. */
export async function inBatches(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
