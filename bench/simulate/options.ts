/** Command-line options of `npm run simulate -- …` (bench/simulate/main.ts). */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export interface SimOptions {
  /** Target deployments (--url, comma-separated or repeated); empty: the simulator starts the service itself. */
  urls: string[];
  adminToken: string | null;
  /** When starting the service: instances sharing DATABASE_URL and REDIS_URL (more than one needs both). */
  instances: number;
  /** When starting the service: PostgreSQL (DATABASE_URL), else a fresh embedded data dir. */
  databaseUrl: string | null;
  redisUrl: string | null;
  /** When starting the service: the build (dist) or src through ts-node. */
  source: 'dist' | 'src' | undefined;
  /** When starting the service: another checkout's build (--build DIR: DIR/dist/src/main.js), e.g. the previous release. */
  buildRoot: string | null;
  /** Run the identity provider on this port (a deployment given with --url must use it as IDENTITY_PROVIDER_URL). */
  idpPort: number | null;
  servers: number;
  /** Players per server. */
  players: number;
  minutes: number;
  /** Uploads per second over the whole network; default: every online player once every 2 minutes. */
  uploadRate: number | null;
  /** Seconds between two resume_session of one player (the plugin's default is 240). */
  resumeInterval: number;
  /** Share of the servers that run in online mode (ONLINE logins through the identity provider). */
  onlineShare: number;
  /** Servers restarted in the middle of the run. */
  restartServers: number;
  /** Player logins (with their state sync) in flight per server. */
  loginConcurrency: number;
  /** Players 1..N already exist (bench generators: generated uuids); the simulator logs those in instead of creating players. */
  existingPlayers: number;
  /** Share of online players that leave (and come back 30-120 s later) per minute. */
  churn: number;
  /** Chat lines per server per minute. */
  chatPerMinute: number;
  /** Share of online players moving to another server of the network per minute (proxy switching; 0: off). */
  switchPerMinute: number;
  /** The pack-link check (needs a service the simulator starts: its RESOURCE_DIR holds the pack). */
  packLinks: boolean;
  /** RESOURCE_LINK_TTL_SECONDS of a service the simulator starts (null: the service's default). */
  linkTtl: number | null;
  seed: number;
  smoke: boolean;
  json: boolean;
  /** Use the wsServer and assetServer the server login advertises instead of the --url. */
  followAdvertised: boolean;
}

const HELP = `npm run simulate -- [options]

Acts as N game servers the way the plugin does, or (--smoke) makes every call once.

Target:
  --url URL[,URL]        an existing deployment (several: round-robin per server); needs --admin-token
  --admin-token T        its ADMIN_TOKEN (default: env ADMIN_TOKEN)
  (no --url)             start the service itself: embedded database in a fresh data dir, or
                         DATABASE_URL / --database-url; REDIS_URL / --redis-url; --instances N
  --source dist|src      the build (default when present) or src through ts-node
  --build DIR            start another checkout's build instead (DIR/dist/src/main.js, e.g. the
                         previous release on a schema this checkout migrated: .ci/rolling-upgrade)
  --idp-port P           run the fake identity provider on port P (for --url deployments whose
                         IDENTITY_PROVIDER_URL points at it); without it ONLINE logins are skipped

Load:
  --servers N (10)  --players M per server (20)  --minutes T (2)
  --upload-rate R        uploads per second, whole network (default players/120 s)
  --resume-interval S    seconds between resume_session of a player (240)
  --online-share F       share of servers in online mode (0.5)
  --restart-servers K    servers restarted in the middle (1)
  --login-concurrency C  player logins in flight per server (4)
  --existing-players N   log in the generated players 1..N instead of creating players
  --churn F              share of players leaving and coming back per minute (0.02)
  --chat-per-minute C    chat lines per server per minute (1)
  --switch-per-minute F  share of online players a proxy moves to another server per minute (0);
                         above 0 the simulator declares every server one network (session handover)
  --pack-links           every joining player fetches the pack URL its server got at login; with
  --link-ttl S           RESOURCE_LINK_TTL_SECONDS of the service it starts, a short run spans many
                         link lifetimes (a "day" of pack links: 24 × S seconds)
  --seed S (1)  --json  --follow-advertised

Smoke:
  --smoke                one server, one player, every call once; exit 1 on any unexpected answer
`;

function number(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(`--${name} must be a number from ${min} to ${max}, got "${raw}"`);
  return value;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): SimOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      url: { type: 'string', multiple: true },
      'admin-token': { type: 'string' },
      instances: { type: 'string' },
      'database-url': { type: 'string' },
      'redis-url': { type: 'string' },
      source: { type: 'string' },
      build: { type: 'string' },
      'idp-port': { type: 'string' },
      servers: { type: 'string' },
      players: { type: 'string' },
      minutes: { type: 'string' },
      'upload-rate': { type: 'string' },
      'resume-interval': { type: 'string' },
      'online-share': { type: 'string' },
      'restart-servers': { type: 'string' },
      'login-concurrency': { type: 'string' },
      'existing-players': { type: 'string' },
      churn: { type: 'string' },
      'chat-per-minute': { type: 'string' },
      'switch-per-minute': { type: 'string' },
      'pack-links': { type: 'boolean' },
      'link-ttl': { type: 'string' },
      seed: { type: 'string' },
      smoke: { type: 'boolean' },
      json: { type: 'boolean' },
      'follow-advertised': { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const urls = (values.url ?? [])
    .flatMap((url) => url.split(','))
    .map((url) => url.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const url of urls)
    if (!/^https?:\/\//.test(url)) throw new Error(`--url must be an http(s) address, got "${url}"`);
  const adminToken = values['admin-token'] ?? (urls.length > 0 ? (env.ADMIN_TOKEN ?? null) : null);
  if (values.source !== undefined && values.source !== 'dist' && values.source !== 'src')
    throw new Error('--source must be dist or src');
  if (values.build !== undefined && (urls.length > 0 || values.source !== undefined))
    throw new Error('--build starts a service: it goes with neither --url nor --source');
  const options: SimOptions = {
    urls,
    adminToken: adminToken || null,
    instances: number('instances', values.instances, 1, 1, 16),
    databaseUrl: (values['database-url'] ?? env.DATABASE_URL ?? '').trim() || null,
    redisUrl: (values['redis-url'] ?? env.REDIS_URL ?? '').trim() || null,
    source: values.source === 'dist' || values.source === 'src' ? values.source : undefined,
    buildRoot: values.build?.trim() ? resolve(values.build.trim()) : null,
    idpPort: values['idp-port'] === undefined ? null : number('idp-port', values['idp-port'], 0, 0, 65_535),
    servers: number('servers', values.servers, 10, 1, 10_000),
    players: number('players', values.players, 20, 0, 100_000),
    minutes: number('minutes', values.minutes, 2, 0),
    uploadRate: values['upload-rate'] === undefined ? null : number('upload-rate', values['upload-rate'], 0, 0),
    resumeInterval: number('resume-interval', values['resume-interval'], 240, 1),
    onlineShare: number('online-share', values['online-share'], 0.5, 0, 1),
    restartServers: number('restart-servers', values['restart-servers'], 1, 0),
    loginConcurrency: number('login-concurrency', values['login-concurrency'], 4, 1, 1_000),
    existingPlayers: number('existing-players', values['existing-players'], 0, 0),
    churn: number('churn', values.churn, 0.02, 0, 1),
    chatPerMinute: number('chat-per-minute', values['chat-per-minute'], 1, 0),
    switchPerMinute: number('switch-per-minute', values['switch-per-minute'], 0, 0, 1),
    packLinks: values['pack-links'] ?? false,
    linkTtl: values['link-ttl'] === undefined ? null : number('link-ttl', values['link-ttl'], 0, 1, 604_800),
    seed: number('seed', values.seed, 1, 0, 2 ** 32 - 1),
    smoke: values.smoke ?? false,
    json: values.json ?? false,
    followAdvertised: values['follow-advertised'] ?? false,
  };
  if (urls.length > 0 && (options.packLinks || options.linkTtl !== null))
    throw new Error('--pack-links and --link-ttl need a service the simulator starts (no --url)');
  if (urls.length > 0 && !options.adminToken)
    throw new Error(
      '--url needs --admin-token (or ADMIN_TOKEN): the simulator provisions its servers and players through the admin API',
    );
  if (urls.length === 0 && options.instances > 1 && (!options.databaseUrl || !options.redisUrl)) {
    throw new Error('--instances above 1 needs DATABASE_URL and REDIS_URL (the embedded database is single-process)');
  }
  if (options.existingPlayers > 0 && options.existingPlayers < options.servers * options.players) {
    throw new Error(
      `--existing-players ${options.existingPlayers} is fewer than the ${options.servers * options.players} players simulated`,
    );
  }
  return options;
}

export { HELP };
