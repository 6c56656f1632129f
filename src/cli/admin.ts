/**
 * The admin CLI: `npm run admin -- <group> <action> [arguments] [options]` calls the admin API
 * (decisions.md §8) of a running service, for admins who would rather not write curl.
 *
 * - The token comes from the environment only (a command-line flag would end up in the shell
 *   history and in `ps`): STAFF_TOKEN, a staff member's personal API token, else ADMIN_TOKEN, the
 *   owner's break-glass key. It is never printed.
 * - The service address is `--url`, else the service's own PUBLIC_BASE_URL rule
 *   (`http://localhost:$PORT`, `https` with TLS files), from the same environment variables.
 * - The answer is printed as JSON on stdout (indented; `--json` for one line); reads print a table
 *   (src/cli/admin-reads.ts), or the JSON with `--json`. A refusal prints
 *   the service's `{error, message}` on stderr and exits 1; a usage mistake prints the usage and
 *   exits 2.
 *
 * Node built-ins only. node:http rather than fetch: fetch gives up waiting for the answer after
 * 300 s, and a rescan or a recompute of a large network can take longer.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/app-config';
import { call, Call, Command, OptionSpec, Parsed, text, UsageError } from './admin-command';
import { CONNECTIONS_TABLE, ECONOMY_TABLE, READ_COMMANDS } from './admin-reads';
import { STAFF_COMMANDS } from './admin-staff';

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: {
    type: 'string',
    value: '<url>',
    help: 'service address (default: PUBLIC_BASE_URL, else http://localhost:$PORT)',
  },
  json: { type: 'boolean', help: 'print the JSON answer on one line (reads print a table without it)' },
  help: { type: 'boolean', help: 'show this help' },
};

/** A decimal integer argument, sent as a JSON number. */
function integer(value: string | undefined, what: string, command: Command): number {
  if (value === undefined || !/^-?\d{1,15}$/.test(value))
    throw new UsageError(`${what} must be an integer, got ${JSON.stringify(value ?? '')}`, command);
  return Number(value);
}

/** A season's close rule from --grant and --top (both or neither); --no-grant (updates) removes it. */
function closeRule(
  values: Parsed['values'],
  command: Command,
  update: boolean,
): { closeRule?: { collection: string; top: number } | null } {
  const collection = text(values, 'grant');
  const top = text(values, 'top');
  if (update && values['no-grant'] === true) {
    if (collection !== undefined || top !== undefined)
      throw new UsageError('--no-grant takes no --grant or --top', command);
    return { closeRule: null };
  }
  if (collection === undefined && top === undefined) return {};
  if (collection === undefined || top === undefined) throw new UsageError('give --grant and --top together', command);
  return { closeRule: { collection, top: integer(top, '--top', command) } };
}

/** The values of a repeated --scope, as given (the service checks them). */
function scopes(value: Parsed['values'][string]): string[] {
  const given = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return given.filter((scope): scope is string => typeof scope === 'string');
}

/** The JSON of a file (`-` for stdin), checked here so a typo gets a line number, not a 400. */
function jsonFile(path: string, command: Command): string {
  let content: string;
  try {
    content = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, command);
  }
  try {
    JSON.parse(content);
  } catch (error) {
    throw new UsageError(
      `${path} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      command,
    );
  }
  return content;
}

function importCommand(group: 'charts' | 'collections' | 'packs', what: string): Command {
  const command: Command = {
    name: `${group} import`,
    args: ['<file.json>'],
    options: {},
    summary: `upsert ${what} from a JSON array (PUT /admin/${group})`,
    details:
      `The file (or - for stdin) holds the array PUT /admin/${group} takes. The whole batch is checked\n` +
      `first and stored in one transaction, or nothing is: at most 1,000 entries and 256 KiB per call.\n` +
      `Answers {"upserted": n}.`,
    build: ({ positionals: [file] }) => ({ ...call('PUT', `/admin/${group}`), body: jsonFile(file, command) }),
  };
  return command;
}

const COMMANDS: Command[] = [
  ...READ_COMMANDS,
  {
    name: 'servers create',
    args: [],
    options: {
      name: { type: 'string', value: '<name>', help: 'unique server name (1-64 characters)', required: true },
      country: { type: 'string', value: '<country>', help: 'country or region shown to players', required: true },
      ip: { type: 'string', value: '<address>', help: 'public IP address (default: the address its logins come from)' },
    },
    summary: 'register a game server and print its first bootstrap token',
    details:
      'POST /admin/servers. Answers {"serverID", "serverName", "bootstrapToken"}: put the token in the plugin configuration.',
    build: ({ values }) => ({
      ...call('POST', '/admin/servers'),
      body: JSON.stringify({
        name: text(values, 'name'),
        country: text(values, 'country'),
        ...(values.ip !== undefined ? { ip: text(values, 'ip') } : {}),
      }),
    }),
  },
  {
    name: 'servers rotate-bootstrap',
    args: ['<serverID>'],
    options: {},
    summary: 'issue a new bootstrap token (the old one stops working)',
    details: 'POST /admin/servers/{serverID}/bootstrap-token. Answers {"bootstrapToken"}.',
    build: ({ positionals: [serverId] }) =>
      call('POST', '/admin/servers/{serverID}/bootstrap-token', { serverID: serverId }),
  },
  {
    name: 'servers logout',
    args: ['<serverID>'],
    options: {},
    summary: "end the server's session: its players are logged out, its WebSocket closes",
    details:
      'POST /admin/servers/{serverID}/logout. Answers {"serverID", "endedSessions"}. It logs in again with its bootstrap token: rotate that first to keep it out.',
    build: ({ positionals: [serverId] }) => call('POST', '/admin/servers/{serverID}/logout', { serverID: serverId }),
  },
  {
    name: 'players create',
    args: [],
    options: {
      username: { type: 'string', value: '<name>', help: '1-32 characters of A-Z a-z 0-9 _', required: true },
      uuid: { type: 'string', value: '<uuid>', help: 'Minecraft UUID (8-4-4-4-12 hex)' },
      'display-name': { type: 'string', value: '<name>', help: 'display name (default: the username)' },
    },
    summary: 'create a player (for Net Token logins)',
    details: 'POST /admin/players. Answers {"uid", "username", "displayName", "uuid"}.',
    build: ({ values }) => ({
      ...call('POST', '/admin/players'),
      body: JSON.stringify({
        username: text(values, 'username'),
        ...(values.uuid !== undefined ? { uuid: text(values, 'uuid') } : {}),
        ...(values['display-name'] !== undefined ? { displayName: text(values, 'display-name') } : {}),
      }),
    }),
  },
  {
    name: 'players net-token',
    args: ['<uid>'],
    options: {},
    summary: "issue the player's Net Token (the old one stops working)",
    details: 'POST /admin/players/{uid}/net-token. Answers {"netToken"}: the player enters it at a TOKEN login.',
    build: ({ positionals: [uid] }) => call('POST', '/admin/players/{uid}/net-token', { uid }),
  },
  {
    name: 'players ban',
    args: ['<uid>'],
    options: {
      reason: { type: 'string', value: '<text>', help: 'shown to the player at login (430)' },
      until: {
        type: 'string',
        value: '<YYYY-MM-DDTHH:mm:ss>',
        help: "end of the ban in the service's time zone (default: permanent)",
      },
      message: { type: 'string', value: '<text>', help: 'kick message (default: "You are banned: <reason>")' },
    },
    summary: 'ban a player; online sessions are kicked and tokens revoked',
    details:
      'POST /admin/players/{uid}/ban. A new ban replaces the current one. Answers {"uid", "reason", "message", "until"}.',
    build: ({ positionals: [uid], values }) => ({
      ...call('POST', '/admin/players/{uid}/ban', { uid }),
      body: JSON.stringify({
        ...(values.reason !== undefined ? { reason: text(values, 'reason') } : {}),
        ...(values.until !== undefined ? { until: text(values, 'until') } : {}),
        ...(values.message !== undefined ? { message: text(values, 'message') } : {}),
      }),
    }),
  },
  {
    name: 'players unban',
    args: ['<uid>'],
    options: {},
    summary: "lift the player's ban (nothing to lift is fine)",
    details: 'DELETE /admin/players/{uid}/ban. Answers nothing (204): the command prints nothing and exits 0.',
    build: ({ positionals: [uid] }) => call('DELETE', '/admin/players/{uid}/ban', { uid }),
  },
  {
    name: 'players banstate',
    args: ['<uid>', '<value>'],
    options: {},
    summary: 'set the warning level the client shows (0 = none)',
    details: 'PUT /admin/players/{uid}/banstate. Answers {"uid", "banstate"}.',
    build(parsed) {
      const [uid, value] = parsed.positionals;
      return {
        ...call('PUT', '/admin/players/{uid}/banstate', { uid }),
        body: JSON.stringify({ banstate: integer(value, 'value', this) }),
      };
    },
  },
  {
    name: 'players export',
    args: ['<uid>'],
    options: {},
    summary: "print every row of the player's data as one JSON document (a privacy request)",
    details:
      'POST /admin/players/{uid}/export (audited). Answers {"format", "uid", "exportedAt", "tables"}: redirect\n' +
      'it to a file and hand that to the player (docs/operations.md "Answering a privacy request").',
    build: ({ positionals: [uid] }) => call('POST', '/admin/players/{uid}/export', { uid }),
  },
  {
    name: 'players erase',
    args: ['<uid>'],
    options: {
      confirm: {
        type: 'string',
        value: '<username>',
        help: "the player's current username, exactly (proves you named the player you meant)",
        required: true,
      },
    },
    summary: 'erase the player: their rows deleted or anonymised, ranks dropped, name freed (cannot be undone)',
    details:
      'POST /admin/players/{uid}/erase. One transaction; audit rows keep a pseudonym. Answers {"uid",\n' +
      '"pseudonym", "rows"}. Export first if the player asked for their data too.',
    build: ({ positionals: [uid], values }) => ({
      ...call('POST', '/admin/players/{uid}/erase', { uid }),
      body: JSON.stringify({ confirm: text(values, 'confirm') }),
    }),
  },
  {
    name: 'economy show',
    args: ['<uid>'],
    options: {
      limit: { type: 'string', value: '<n>', help: 'history entries per page, 1-500 (default 50)' },
      before: { type: 'string', value: '<id>', help: 'page before this entry (the previous answer\'s "nextBefore")' },
    },
    summary: "a player's wattHour balance and its change history, newest first",
    details: 'GET /admin/players/{uid}/economy. Answers {"uid", "wattHour", "updatedAt", "history", "nextBefore"}.',
    render: ECONOMY_TABLE,
    build: ({ positionals: [uid], values }) => {
      const query = new URLSearchParams();
      if (values.limit !== undefined) query.set('limit', text(values, 'limit') ?? '');
      if (values.before !== undefined) query.set('before', text(values, 'before') ?? '');
      const search = query.toString();
      return call('GET', '/admin/players/{uid}/economy', { uid }, search ? `?${search}` : '');
    },
  },
  ...(['on', 'off'] as const).map((state): Command => ({
    name: `maintenance ${state}`,
    args: [],
    options: {
      message: { type: 'string', value: '<text>', help: 'shown on the game server console at a refused login' },
    },
    summary:
      state === 'on' ? 'refuse server logins (401 MAINTENANCE) until maintenance is off' : 'accept server logins again',
    details: 'PUT /admin/maintenance. Answers {"enabled", "message"}.',
    build: ({ values }) => ({
      ...call('PUT', '/admin/maintenance'),
      body: JSON.stringify({
        enabled: state === 'on',
        ...(values.message !== undefined ? { message: text(values, 'message') } : {}),
      }),
    }),
  })),
  {
    name: 'plugin-policy set',
    args: [],
    options: {
      min: {
        type: 'string',
        value: '<version>',
        help: 'lowest plugin version accepted at server login',
        required: true,
      },
      latest: {
        type: 'string',
        value: '<version>',
        help: 'version an outdated plugin is told to install',
        required: true,
      },
      sha: {
        type: 'string',
        multiple: true,
        value: '<sha>',
        help: 'an accepted plugin build SHA (repeat; none = any build)',
      },
      'down-url': {
        type: 'string',
        value: '<url>',
        help: 'where an outdated plugin downloads the latest (default "")',
      },
    },
    summary: 'set the plugin versions and builds server logins accept (else 426)',
    details:
      'PUT /admin/plugin-policy. Replaces the whole policy. Answers {"minPluginVersion", "latestPluginVersion", "allowedPluginSHAs", "downUrl"}.',
    build(parsed) {
      const { values } = parsed;
      const shas = values.sha;
      const allowed = Array.isArray(shas) ? shas.filter((sha): sha is string => typeof sha === 'string') : [];
      return {
        ...call('PUT', '/admin/plugin-policy'),
        body: JSON.stringify({
          minPluginVersion: integer(text(values, 'min'), '--min', this),
          latestPluginVersion: integer(text(values, 'latest'), '--latest', this),
          allowedPluginSHAs: allowed,
          downUrl: text(values, 'down-url') ?? '',
        }),
      };
    },
  },
  {
    name: 'session-handover set',
    args: ['<off|all|groups>'],
    options: {
      group: {
        type: 'string',
        multiple: true,
        value: '<name>=<id>,<id>[,...]',
        help: 'a network of servers (repeat; needed with groups)',
      },
      'login-mode': {
        type: 'string',
        multiple: true,
        value: '<ONLINE|TOKEN|OFFLINE_REFRESH>',
        help: 'a login mode that may take a session over (repeat; default all three)',
      },
    },
    summary: 'declare which servers form one network: a login there takes the session over instead of 409',
    details: 'PUT /admin/session-handover. Replaces the whole setting. Answers {"mode", "groups", "modes"}.',
    build(parsed) {
      const [mode] = parsed.positionals;
      if (mode !== 'off' && mode !== 'all' && mode !== 'groups')
        throw new UsageError(`the mode must be off, all or groups, got ${JSON.stringify(mode)}`, this);
      const list = (name: string) => {
        const value = parsed.values[name];
        return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
      };
      const groups = list('group').map((spec) => {
        const match = /^([^=]+)=(.+)$/.exec(spec);
        if (!match) throw new UsageError(`--group must be <name>=<id>,<id>[,...], got ${JSON.stringify(spec)}`, this);
        return {
          name: match[1],
          serverIDs: match[2].split(',').map((id) => integer(id.trim(), `a server id of --group ${match[1]}`, this)),
        };
      });
      const modes = list('login-mode');
      return {
        ...call('PUT', '/admin/session-handover'),
        body: JSON.stringify({
          mode,
          ...(groups.length > 0 ? { groups } : {}),
          ...(modes.length > 0 ? { modes } : {}),
        }),
      };
    },
  },
  importCommand('charts', 'charts'),
  importCommand('collections', 'collection definitions'),
  importCommand('packs', 'resource-pack descriptions'),
  {
    name: 'packs delete',
    args: ['<name>'],
    options: {},
    summary: 'withdraw a resource-pack description',
    details: 'DELETE /admin/packs/{name}. Answers nothing (204): the command prints nothing and exits 0.',
    build: ({ positionals: [name] }) => call('DELETE', '/admin/packs/{name}', { name }),
  },
  {
    name: 'resources rescan',
    args: [],
    options: {},
    summary: 'index RESOURCE_DIR again (only changed files are hashed)',
    details: 'POST /admin/resources/rescan. Answers {"data", "lang", "packs", "bytes"} of the whole index.',
    build: () => call('POST', '/admin/resources/rescan'),
  },
  {
    name: 'ratings recompute',
    args: [],
    options: {},
    summary: "recompute every player's bests and ATP (after chart constants changed)",
    details: 'POST /admin/ratings/recompute. Answers {"players", "bests", "atpChanged", "batches"} when done.',
    build: () => call('POST', '/admin/ratings/recompute'),
  },
  {
    name: 'plays approve',
    args: ['<id>'],
    options: {},
    summary: 'approve a flagged play: it enters bests, ATP and ranks as if counted when it was accepted',
    details: 'POST /admin/plays/{id}/approve. Answers the play.',
    build: ({ positionals: [id] }) => call('POST', '/admin/plays/{id}/approve', { id }),
  },
  {
    name: 'plays void',
    args: ['<id>'],
    options: { reason: { type: 'string', value: '<text>', help: 'why (kept with the play, at most 200 characters)' } },
    summary: "void a play: it counts for nothing, its player's bests, ATP and ranks are recomputed",
    details: 'POST /admin/plays/{id}/void. Answers the play.',
    build: ({ positionals: [id], values }) => ({
      ...call('POST', '/admin/plays/{id}/void', { id }),
      body: JSON.stringify(values.reason !== undefined ? { reason: text(values, 'reason') } : {}),
    }),
  },
  {
    name: 'plays restore',
    args: ['<id>'],
    options: {},
    summary: 'take a void back: the play counts again as before',
    details: 'POST /admin/plays/{id}/restore. Answers the play.',
    build: ({ positionals: [id] }) => call('POST', '/admin/plays/{id}/restore', { id }),
  },
  {
    name: 'api-keys create',
    args: [],
    options: {
      name: { type: 'string', value: '<name>', help: 'what the key is for (1-64 characters)', required: true },
      scope: {
        type: 'string',
        multiple: true,
        value: '<read:boards|read:players>',
        help: 'a scope of the key (repeat; at least one)',
        required: true,
      },
      'rate-limit': {
        type: 'string',
        value: '<n>',
        help: 'calls a minute for this key (default: PUBLIC_API_KEY_RATE_LIMIT)',
      },
    },
    summary: 'create a public API key and print it (the only time it is shown)',
    details:
      'POST /admin/api-keys. Answers the key\'s record and "key": give that to the integration; only its SHA-256 is kept.',
    build(parsed) {
      const { values } = parsed;
      return {
        ...call('POST', '/admin/api-keys'),
        body: JSON.stringify({
          name: text(values, 'name'),
          scopes: scopes(values.scope),
          ...(values['rate-limit'] !== undefined
            ? { rateLimit: integer(text(values, 'rate-limit'), '--rate-limit', this) }
            : {}),
        }),
      };
    },
  },
  {
    name: 'api-keys update',
    args: ['<id>'],
    options: {
      name: { type: 'string', value: '<name>', help: 'a new name' },
      scope: { type: 'string', multiple: true, value: '<read:boards|read:players>', help: 'the new scopes (repeat)' },
      'rate-limit': {
        type: 'string',
        value: '<n|default>',
        help: 'calls a minute, or default for PUBLIC_API_KEY_RATE_LIMIT',
      },
    },
    summary: "change a key's name, scopes or limit (every instance applies it at once)",
    details: "PATCH /admin/api-keys/{id}. Fields not given stay. Answers the key's record.",
    build(parsed) {
      const { positionals, values } = parsed;
      const limit = text(values, 'rate-limit');
      const body = {
        ...(values.name !== undefined ? { name: text(values, 'name') } : {}),
        ...(values.scope !== undefined ? { scopes: scopes(values.scope) } : {}),
        ...(limit !== undefined
          ? { rateLimit: limit === 'default' ? null : integer(limit, '--rate-limit', this) }
          : {}),
      };
      if (Object.keys(body).length === 0) throw new UsageError('give --name, --scope or --rate-limit', this);
      return { ...call('PATCH', '/admin/api-keys/{id}', { id: positionals[0] }), body: JSON.stringify(body) };
    },
  },
  {
    name: 'api-keys revoke',
    args: ['<id>'],
    options: {},
    summary: 'revoke a key: every instance refuses it from the next call',
    details: 'DELETE /admin/api-keys/{id}. Answers nothing (204); the key stays listed, revoked.',
    build: ({ positionals: [id] }) => call('DELETE', '/admin/api-keys/{id}', { id }),
  },
  {
    name: 'seasons create',
    args: ['<slug>'],
    options: {
      name: { type: 'string', value: '<name>', help: 'its name (1-128 characters)', required: true },
      starts: { type: 'string', value: '<YYYY-MM-DDTHH:mm:ss>', help: 'its start (not in the past)', required: true },
      ends: { type: 'string', value: '<YYYY-MM-DDTHH:mm:ss>', help: 'its end, exclusive', required: true },
      grant: { type: 'string', value: '<collection>', help: 'at the close, grant this collection (with --top)' },
      top: { type: 'string', value: '<n>', help: 'to the first n of its ATP board, 1-1000 (with --grant)' },
    },
    summary: 'create a season: a board period with its own boards, optionally granting a collection at its close',
    details:
      'POST /admin/seasons. Answers the season. Its boards: boards atp --period season:<slug> (and boards chart).',
    build(parsed) {
      const { positionals, values } = parsed;
      return {
        ...call('POST', '/admin/seasons'),
        body: JSON.stringify({
          slug: positionals[0],
          name: text(values, 'name'),
          startsAt: text(values, 'starts'),
          endsAt: text(values, 'ends'),
          ...closeRule(values, this, false),
        }),
      };
    },
  },
  {
    name: 'seasons update',
    args: ['<id>'],
    options: {
      name: { type: 'string', value: '<name>', help: 'a new name' },
      starts: { type: 'string', value: '<YYYY-MM-DDTHH:mm:ss>', help: 'a new start (only before it starts)' },
      ends: { type: 'string', value: '<YYYY-MM-DDTHH:mm:ss>', help: 'a new end (not in the past)' },
      grant: { type: 'string', value: '<collection>', help: 'a new close rule: this collection (with --top)' },
      top: { type: 'string', value: '<n>', help: 'a new close rule: to the first n (with --grant)' },
      'no-grant': { type: 'boolean', help: 'remove the close rule' },
    },
    summary: 'change an open season: its name, end, close rule; its start only before it starts',
    details: 'PATCH /admin/seasons/{id}. Fields not given stay. Answers the season.',
    build(parsed) {
      const { positionals, values } = parsed;
      const body = {
        ...(values.name !== undefined ? { name: text(values, 'name') } : {}),
        ...(values.starts !== undefined ? { startsAt: text(values, 'starts') } : {}),
        ...(values.ends !== undefined ? { endsAt: text(values, 'ends') } : {}),
        ...closeRule(values, this, true),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError('give --name, --starts, --ends, --grant with --top, or --no-grant', this);
      return { ...call('PATCH', '/admin/seasons/{id}', { id: positionals[0] }), body: JSON.stringify(body) };
    },
  },
  {
    name: 'seasons close',
    args: ['<id>'],
    options: {},
    summary: 'close a season now: freeze its boards and apply its close rule (prints whom it granted)',
    details: 'POST /admin/seasons/{id}/close. Answers {"season", "granted"}.',
    build: ({ positionals: [id] }) => call('POST', '/admin/seasons/{id}/close', { id }),
  },
  {
    name: 'seasons delete',
    args: ['<id>'],
    options: {},
    summary: 'delete a season that has not started',
    details: 'DELETE /admin/seasons/{id}. Answers nothing (204).',
    build: ({ positionals: [id] }) => call('DELETE', '/admin/seasons/{id}', { id }),
  },
  {
    name: 'webhooks create',
    args: [],
    options: {
      name: { type: 'string', value: '<name>', help: 'what the webhook is for (1-64 characters)', required: true },
      receiver: {
        type: 'string',
        value: '<url>',
        help: 'the URL deliveries go to, http(s), a public address (--url is the service)',
        required: true,
      },
      event: {
        type: 'string',
        multiple: true,
        value: '<event>',
        help: 'an event it wants (repeat): chart.first_place, player.atp_top, player.personal_best, player.banned, player.unbanned, play.flagged, play.voided, server.offline',
        required: true,
      },
      format: { type: 'string', value: '<json|discord>', help: 'json (default) or a Discord webhook message' },
      'atp-top': { type: 'string', value: '<n>', help: 'N of player.atp_top (default 10)' },
    },
    summary: 'register a webhook and print its signing secret (the only time it is shown)',
    details: 'POST /admin/webhooks. Answers the webhook and "secret" (HMAC-SHA256 key of X-Rhythmc-Signature).',
    build(parsed) {
      const { values } = parsed;
      return {
        ...call('POST', '/admin/webhooks'),
        body: JSON.stringify({
          name: text(values, 'name'),
          url: text(values, 'receiver'),
          events: scopes(values.event),
          ...(values.format !== undefined ? { format: text(values, 'format') } : {}),
          ...(values['atp-top'] !== undefined ? { atpTop: integer(text(values, 'atp-top'), '--atp-top', this) } : {}),
        }),
      };
    },
  },
  {
    name: 'webhooks update',
    args: ['<id>'],
    options: {
      name: { type: 'string', value: '<name>', help: 'a new name' },
      receiver: { type: 'string', value: '<url>', help: 'a new URL deliveries go to' },
      event: { type: 'string', multiple: true, value: '<event>', help: 'the events it wants (repeat)' },
      format: { type: 'string', value: '<json|discord>', help: 'the format' },
      'atp-top': { type: 'string', value: '<n>', help: 'N of player.atp_top' },
      enabled: {
        type: 'string',
        value: '<true|false>',
        help: 'pause it, or turn it on again (also after the service turned it off)',
      },
    },
    summary: 'change a webhook; --enabled true turns on one the service turned off',
    details: 'PATCH /admin/webhooks/{id}. Fields not given stay. Answers the webhook.',
    build(parsed) {
      const { positionals, values } = parsed;
      const enabled = text(values, 'enabled');
      if (enabled !== undefined && enabled !== 'true' && enabled !== 'false')
        throw new UsageError('--enabled must be true or false', this);
      const body = {
        ...(values.name !== undefined ? { name: text(values, 'name') } : {}),
        ...(values.receiver !== undefined ? { url: text(values, 'receiver') } : {}),
        ...(values.event !== undefined ? { events: scopes(values.event) } : {}),
        ...(values.format !== undefined ? { format: text(values, 'format') } : {}),
        ...(values['atp-top'] !== undefined ? { atpTop: integer(text(values, 'atp-top'), '--atp-top', this) } : {}),
        ...(enabled !== undefined ? { enabled: enabled === 'true' } : {}),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError('give --name, --receiver, --event, --format, --atp-top or --enabled', this);
      return { ...call('PATCH', '/admin/webhooks/{id}', { id: positionals[0] }), body: JSON.stringify(body) };
    },
  },
  {
    name: 'webhooks rotate-secret',
    args: ['<id>'],
    options: {
      'overlap-seconds': {
        type: 'string',
        value: '<s>',
        help: 'how long the old secret keeps signing beside the new one (default 86400, 0 to 604800)',
      },
    },
    summary: 'give a webhook a new signing secret and print it (the only time it is shown)',
    details:
      'POST /admin/webhooks/{id}/secret. Answers the webhook and "secret"; the old secret signs too until previousSecretExpiresAt.',
    build(parsed) {
      const { positionals, values } = parsed;
      const overlap = text(values, 'overlap-seconds');
      return {
        ...call('POST', '/admin/webhooks/{id}/secret', { id: positionals[0] }),
        body: JSON.stringify(
          overlap !== undefined ? { overlapSeconds: integer(overlap, '--overlap-seconds', this) } : {},
        ),
      };
    },
  },
  {
    name: 'webhooks delete',
    args: ['<id>'],
    options: {},
    summary: 'delete a webhook with its delivery log (pending deliveries are dropped)',
    details: 'DELETE /admin/webhooks/{id}. Answers nothing (204).',
    build: ({ positionals: [id] }) => call('DELETE', '/admin/webhooks/{id}', { id }),
  },
  {
    name: 'realtime connections',
    args: [],
    options: {},
    summary: 'game servers connected over WebSocket, on every instance',
    details: 'GET /admin/realtime/connections.',
    render: CONNECTIONS_TABLE,
    build: () => call('GET', '/admin/realtime/connections'),
  },
  ...STAFF_COMMANDS,
];

function optionUsage(name: string, spec: OptionSpec): string {
  const flag = spec.type === 'string' ? `--${name} ${spec.value}` : `--${name}`;
  return spec.type === 'string' && spec.required ? flag : `[${flag}]`;
}

function commandLine(command: Command): string {
  return [
    command.name,
    ...command.args,
    ...Object.entries(command.options).map(([name, spec]) => optionUsage(name, spec)),
  ].join(' ');
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  return Object.entries(options).map(
    ([name, spec]) => `  ${`--${name}${spec.type === 'string' ? ` ${spec.value}` : ''}`.padEnd(36)} ${spec.help}`,
  );
}

/** `command line` then its summary, indented, for lists of commands. */
function commandList(commands: Command[]): string[] {
  return commands.flatMap((command) => [`  ${commandLine(command)}`, `      ${command.summary}`]);
}

function generalUsage(): string {
  return [
    'Usage: npm run admin -- <command> [arguments] [options]',
    '',
    'Calls the admin API of a running rhythmc-backend with the token in STAFF_TOKEN (a personal API token),',
    'else ADMIN_TOKEN.',
    '',
    'Commands:',
    ...commandList(COMMANDS),
    '  help [<command>]',
    '      this help, or the help of one command (also: <command> --help)',
    '',
    'Options of every command:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Exit status: 0 done, 1 refused by the service (its {error, message} on stderr) or unreachable, 2 usage.',
  ].join('\n');
}

function commandUsage(command: Command): string {
  const options = optionLines(command.options);
  return [
    `Usage: npm run admin -- ${commandLine(command)}`,
    '',
    `${command.summary[0].toUpperCase()}${command.summary.slice(1)}.`,
    command.details,
    ...(options.length > 0 ? ['', 'Options:', ...options] : []),
    '',
    'Options of every command:',
    ...optionLines(GLOBAL_OPTIONS),
  ].join('\n');
}

function findCommand(words: string[]): Command | null {
  return COMMANDS.find((command) => command.name === words.slice(0, 2).join(' ')) ?? null;
}

interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

interface Invocation {
  command: Command;
  call: Call;
  url: string;
  compact: boolean;
}

/** Reads the command line; null when it only asked for help (already printed). */
function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv, output: Output): Invocation | null {
  if (argv.length === 0) throw new UsageError('missing command');
  if (argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    const asked = argv[0] === 'help' ? argv.slice(1) : [];
    if (asked.length === 0) {
      output.out(generalUsage());
      return null;
    }
    const command = findCommand(asked);
    if (!command) throw new UsageError(`unknown command "${asked.join(' ')}"`);
    output.out(commandUsage(command));
    return null;
  }
  const command = findCommand(argv);
  if (!command) {
    const group = COMMANDS.filter((candidate) => candidate.name.startsWith(`${argv[0]} `));
    if (group.length > 0 && (argv[1] === undefined || argv[1] === '--help' || argv[1] === '-h')) {
      const list = [
        `Usage: npm run admin -- ${argv[0]} <action> [arguments] [options]`,
        '',
        'Actions (add --help to one for its options):',
        ...commandList(group),
      ].join('\n');
      if (argv[1] === undefined) throw new UsageError(`"${argv[0]}" needs an action`, null, list);
      output.out(list);
      return null;
    }
    throw new UsageError(
      argv[0].startsWith('-')
        ? 'the command comes first: npm run admin -- <command> [options]'
        : `unknown command "${argv.slice(0, 2).join(' ')}"`,
    );
  }

  const options = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed: Parsed;
  try {
    parsed = parseArgs({
      args: argv.slice(2),
      options: Object.fromEntries(
        Object.entries(options).map(([name, spec]) => [
          name,
          { type: spec.type, ...(spec.type === 'string' && spec.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), command);
  }
  if (parsed.values.help === true) {
    output.out(commandUsage(command));
    return null;
  }
  if (parsed.positionals.length !== command.args.length) {
    const expected = command.args.length === 0 ? 'no arguments' : command.args.join(' ');
    throw new UsageError(
      `expected ${expected}, got ${parsed.positionals.length === 0 ? 'none' : parsed.positionals.map((value) => JSON.stringify(value)).join(' ')}`,
      command,
    );
  }
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.type === 'string' && spec.required && parsed.values[name] === undefined)
      throw new UsageError(`--${name} is required`, command);
  }
  const call = command.build(parsed);
  return {
    command,
    call,
    url: serviceUrl(text(parsed.values, 'url'), env, command),
    compact: parsed.values.json === true,
  };
}

/** `--url`, else the address the service advertises by the same rule (decisions.md §1). */
function serviceUrl(flag: string | undefined, env: NodeJS.ProcessEnv, command: Command): string {
  let url = flag;
  if (url === undefined) {
    try {
      url = loadConfig(env).publicBaseUrl;
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(`${error.message} (or pass --url)`, command);
      throw error;
    }
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, got ${JSON.stringify(url)}`, command);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`--url must use http or https, got ${JSON.stringify(url)}`, command);
  return url.replace(/(?<!\/)\/+$/, '');
}

interface Answer {
  status: number;
  text: string;
}

function send(base: string, token: string, call: Call): Promise<Answer> {
  const url = new URL(base + call.path);
  const body = call.body === undefined ? undefined : Buffer.from(call.body, 'utf8');
  const options: RequestOptions = {
    method: call.method,
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json',
      'User-Agent': 'rhythmc-admin-cli/1.0',
      ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } : {}),
    },
  };
  return new Promise((resolve, reject) => {
    const callback = (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    };
    const request =
      url.protocol === 'https:' ? httpsRequest(url, options, callback) : httpRequest(url, options, callback);
    request.on('error', reject);
    request.end(body);
  });
}

function printJson(write: (text: string) => void, value: unknown, compact: boolean): void {
  write(compact ? JSON.stringify(value) : JSON.stringify(value, null, 2));
}

/** Runs one command line; returns the exit status. */
export async function runAdminCli(argv: string[], env: NodeJS.ProcessEnv, output: Output): Promise<number> {
  let invocation: Invocation | null;
  try {
    invocation = parseCommandLine(argv, env, output);
    if (invocation === null) return 0;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.err(
      `error: ${error.message}\n\n${error.usage ?? (error.command ? commandUsage(error.command) : generalUsage())}`,
    );
    return 2;
  }
  const token = env.STAFF_TOKEN?.trim() || env.ADMIN_TOKEN?.trim();
  if (!token) {
    output.err(
      "error: neither STAFF_TOKEN nor ADMIN_TOKEN is set (the CLI reads its token from the environment: a personal API token from the console, or the service's ADMIN_TOKEN)",
    );
    return 2;
  }

  let answer: Answer;
  try {
    answer = await send(invocation.url, token, invocation.call);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
    printJson(
      output.err,
      { error: 'UNAVAILABLE', message: `cannot reach ${invocation.url}: ${reason}` },
      invocation.compact,
    );
    return 1;
  }
  let body: unknown = undefined;
  if (answer.text.length > 0) {
    try {
      body = JSON.parse(answer.text);
    } catch {
      body = undefined;
    }
  }
  if (answer.status >= 200 && answer.status < 300) {
    if (body !== undefined && invocation.command.render && !invocation.compact)
      output.out(invocation.command.render(body));
    else if (body !== undefined) printJson(output.out, body, invocation.compact);
    else if (answer.text.length > 0) output.out(answer.text);
    return 0;
  }
  const refusal =
    typeof body === 'object' && body !== null && 'error' in body
      ? body
      : {
          error: `HTTP_${answer.status}`,
          message: answer.text.slice(0, 500) || `HTTP ${answer.status} without a body`,
        };
  printJson(output.err, refusal, invocation.compact);
  return 1;
}

if (require.main === module) {
  runAdminCli(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
