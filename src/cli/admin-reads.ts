/**
 * The read commands of the admin CLI (issue 17): one per admin read, a table by default, the
 * JSON answer with `--json`. Lists page with `--limit` and `--cursor` (printed under the table).
 */
import {
  AdminRead,
  Command,
  OptionSpec,
  Parsed,
  ReadAnswer,
  ReadQuery,
  readCommand,
  routePath,
  text,
} from './admin-command';
import { cellText, Column, fields, table } from './table';
import type { Schemas } from '../admin-client/client';

const PAGING: Record<string, OptionSpec> = {
  limit: { type: 'string', value: '<n>', help: 'entries per page, 1-200 (default 50)' },
  cursor: { type: 'string', value: '<cursor>', help: 'the next page (printed under the previous one)' },
};

/** The query string of the options given (sent as typed: the service checks them and answers 400). */
function query(values: Parsed['values'], names: string[]): string {
  const search = new URLSearchParams();
  for (const name of names) {
    const value = text(values, name);
    if (value !== undefined) search.set(name, value);
  }
  const encoded = search.toString();
  return encoded ? `?${encoded}` : '';
}

/** A page of a list: its table, then how to get the next page. */
function page<Item>(columns: Column<Item>[]) {
  return (body: { items: Item[]; nextCursor?: string | null }): string =>
    `${table(body.items, columns)}${body.nextCursor ? `\n\nmore: add --cursor ${body.nextCursor}` : ''}`;
}

/** The routes answering one page of a list (`{items, nextCursor}`). */
type ListRoute = {
  [Route in AdminRead]: ReadAnswer<Route> extends { items: unknown[]; nextCursor: string | null } ? Route : never;
}[AdminRead];
type ItemOf<Route extends ListRoute> = ReadAnswer<Route> extends { items: (infer Item)[] } ? Item : never;

/** A list read: its filters are query parameters the document gives the route, its columns fields of its items. */
function listCommand<Route extends ListRoute>(
  name: string,
  route: Route,
  filters: Partial<Record<ReadQuery<Route>, OptionSpec>>,
  summary: string,
  columns: Column<ItemOf<Route>>[],
): Command {
  return readCommand(route, {
    name,
    args: [],
    options: { ...(filters as Record<string, OptionSpec>), ...PAGING },
    summary,
    details: 'Answers {"items", "nextCursor"}.',
    build: ({ values }) => ({
      method: 'GET',
      path: `${route}${query(values, [...Object.keys(filters), 'limit', 'cursor'])}`,
    }),
    render: (body) => page(columns)(body as { items: ItemOf<Route>[]; nextCursor: string | null }),
  });
}

const server = (value: { serverID: number | null; serverName: string | null } | null) =>
  value ? `${cellText(value.serverName)} (${cellText(value.serverID)})` : null;
const ban = (value: { reason: string; until: string | null } | null | undefined) =>
  value ? `${cellText(value.reason || '(no reason)')} until ${cellText(value.until ?? 'forever')}` : null;

function profile(p: Schemas['AdminPlayerProfileResponse']): string {
  const balance = p.balance;
  const activeBan = p.bans.find((entry) => entry.active);
  const live = p.sessions.find((entry) => entry.live);
  return [
    fields([
      ['uid', p.uid],
      ['username', p.username],
      ['displayName', p.displayName],
      ['uuid', p.uuid],
      ['banstate', p.banstate],
      ['ban', ban(activeBan)],
      ['online', live ? `${server(live)} since ${cellText(live.createdAt)}` : null],
      ['wattHour', balance.wattHour],
      ['atp', p.atp],
      ['bests', p.bestCount],
      ['collections', p.collections.join(', ')],
      ['created', p.createdAt],
      ['options', p.options],
    ]),
    '',
    'Sessions (latest 20):',
    table(p.sessions, [
      ['created', (s) => s.createdAt],
      ['mode', (s) => s.mode],
      ['proven', (s) => (s.proven ? 'yes' : 'no')],
      ['server', (s) => (s.serverID === null ? null : server(s))],
      ['live', (s) => (s.live ? 'yes' : 'no')],
      ['loggedOut', (s) => s.loggedOutAt],
      ['reason', (s) => s.logoutReason],
    ]),
    '',
    'Takeovers (latest 20; sessions without proof taken over by a login with proof):',
    table(p.takeovers, [
      ['time', (t) => t.takenAt],
      ['from', (t) => `${cellText(t.fromServerName)} (${cellText(t.fromServerID)})`],
      ['to', (t) => `${cellText(t.toServerName)} (${cellText(t.toServerID)})`],
      ['proof', (t) => t.proof],
    ]),
    '',
    'Bans:',
    table(p.bans, [
      ['id', (b) => b.banId],
      ['created', (b) => b.createdAt],
      ['reason', (b) => b.reason],
      ['until', (b) => b.until ?? 'forever'],
      ['lifted', (b) => b.liftedAt],
      ['active', (b) => (b.active ? 'yes' : 'no')],
    ]),
    '',
    'Balance history (latest 20):',
    table(balance.history, [
      ['time', (h) => h.time],
      ['previous', (h) => h.previousWattHour],
      ['wattHour', (h) => h.wattHour],
      ['server', (h) => h.serverID],
    ]),
    '',
    `Bests (${p.bests.length} of ${cellText(p.bestCount)}, by rating):`,
    table(p.bests, [
      ['levelId', (b) => b.levelId],
      ['acc', (b) => b.acc],
      ['rating', (b) => b.rating],
    ]),
  ].join('\n');
}

function overview(o: Schemas['AdminOverviewResponse']): string {
  const policy = o.pluginPolicy;
  return fields([
    ['serversOnline', o.serversOnline],
    ['playersOnline', o.playersOnline],
    ['uploadsLastMinute', o.uploads.lastMinute],
    ['uploadsLast15Minutes', o.uploads.last15Minutes],
    ['maintenance', o.maintenance.enabled ? `on: ${cellText(o.maintenance.message)}` : 'off'],
    [
      'pluginPolicy',
      policy
        ? `versions ${cellText(policy.minPluginVersion)}-${cellText(policy.latestPluginVersion)}, ${policy.allowedPluginSHAs.length} allowed builds`
        : null,
    ],
  ]);
}

const BOARD_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: 'string', value: '<n>', help: 'the top n, 1-100 (default 10)' },
  around: { type: 'string', value: '<uid>', help: 'a window around this player instead of the top' },
  k: { type: 'string', value: '<n>', help: 'with --around: neighbours on each side, 0-25 (default 5)' },
  period: {
    type: 'string',
    value: '<all|day|week|month|season:<slug>|id>',
    help: 'the period (default all); a closed one answers from its archive',
  },
};

/** The period a board answered for: `season spring-2027 (12): 2027-03-01T00:00:00 to 2027-06-01T00:00:00, closed`. */
const periodLine = (period: Schemas['BoardPeriodView']): string =>
  `period: ${cellText(period.kind)}${period.slug ? ` ${cellText(period.slug)}` : ''} (${cellText(period.id)}): ` +
  `${cellText(period.startsAt)} to ${cellText(period.endsAt)}${period.closed ? ', closed (archive)' : ''}`;

const SEASON_COLUMNS: Column<Schemas['SeasonResponse']>[] = [
  ['id', (r) => r.id],
  ['slug', (r) => r.slug],
  ['name', (r) => r.name],
  ['state', (r) => r.state],
  ['startsAt', (r) => r.startsAt],
  ['endsAt', (r) => r.endsAt],
  [
    'closeRule',
    (r) => (r.closeRule ? `${cellText(r.closeRule.collection)} to the top ${cellText(r.closeRule.top)}` : null),
  ],
];

/** A board: its period, its player's rank (with --around), then the entries. */
function board<Entry>(columns: Column<Entry>[]) {
  return (answer: { period?: Schemas['BoardPeriodView']; rank?: number | null; entries: Entry[] }): string => {
    const rank = 'rank' in answer ? `rank: ${cellText(answer.rank ?? 'none (not on this board)')}\n\n` : '';
    const period = answer.period ? `${periodLine(answer.period)}\n\n` : '';
    return `${period}${rank}${table(answer.entries, columns)}`;
  };
}

export const READ_COMMANDS: Command[] = [
  readCommand('/admin/boards/atp', {
    name: 'boards atp',
    args: [],
    options: BOARD_OPTIONS,
    summary: 'the ATP board: the top, or a window around a player (ranks as the upload answers them)',
    details: 'Answers {"board", "rank"?, "entries"}.',
    build: ({ values }) => ({
      method: 'GET',
      path: `/admin/boards/atp${query(values, ['limit', 'around', 'k', 'period'])}`,
    }),
    render: board([
      ['rank', (r) => r.rank],
      ['uid', (r) => r.uid],
      ['username', (r) => r.username],
      ['displayName', (r) => r.displayName],
      ['atp', (r) => r.atp],
    ]),
  }),
  readCommand('/admin/boards/charts/{levelId}', {
    name: 'boards chart',
    args: ['<levelId>'],
    options: BOARD_OPTIONS,
    summary: "a chart's board: the top, or a window around a player",
    details: 'Answers {"board", "levelId", "rank"?, "entries"}.',
    build: ({ positionals: [levelId], values }) => ({
      method: 'GET',
      path: `${routePath('/admin/boards/charts/{levelId}', { levelId })}${query(values, ['limit', 'around', 'k', 'period'])}`,
    }),
    render: board([
      ['rank', (r) => r.rank],
      ['uid', (r) => r.uid],
      ['username', (r) => r.username],
      ['displayName', (r) => r.displayName],
      ['acc', (r) => r.acc],
      ['rating', (r) => r.rating],
    ]),
  }),
  readCommand('/admin/overview', {
    name: 'overview show',
    args: [],
    options: {},
    summary: 'the network at a glance: servers and players online, uploads, maintenance, plugin policy',
    details: '',
    build: () => ({ method: 'GET', path: '/admin/overview' }),
    render: overview,
  }),
  listCommand(
    'players list',
    '/admin/players',
    {
      username: { type: 'string', value: '<prefix>', help: 'username prefix (case-insensitive)' },
      uuid: { type: 'string', value: '<uuid>', help: 'exact account UUID' },
      uid: { type: 'string', value: '<uid>', help: 'exact uid' },
    },
    'find players: ban in force and online server of each',
    [
      ['uid', (r) => r.uid],
      ['username', (r) => r.username],
      ['displayName', (r) => r.displayName],
      ['uuid', (r) => r.uuid],
      ['banstate', (r) => r.banstate],
      ['ban', (r) => ban(r.ban)],
      ['online', (r) => server(r.online)],
      ['created', (r) => r.createdAt],
    ],
  ),
  readCommand('/admin/players/{uid}', {
    name: 'players show',
    args: ['<uid>'],
    options: {},
    summary: "a player's profile: identity, sessions, bans, balance, ATP, bests, collections, options",
    details: '',
    build: ({ positionals: [uid] }) => ({ method: 'GET', path: routePath('/admin/players/{uid}', { uid }) }),
    render: profile,
  }),
  listCommand(
    'api-keys list',
    '/admin/api-keys',
    {},
    'the public API keys (never the keys themselves), revoked ones included',
    [
      ['id', (r) => r.id],
      ['name', (r) => r.name],
      ['scopes', (r) => r.scopes.join(' ')],
      ['perMinute', (r) => r.effectiveRateLimit],
      ['created', (r) => r.createdAt],
      ['lastUsed', (r) => r.lastUsedAt],
      ['revoked', (r) => r.revokedAt],
    ],
  ),
  listCommand('seasons list', '/admin/seasons', {}, 'the seasons, closed and archived ones included', SEASON_COLUMNS),
  readCommand('/admin/seasons/{id}', {
    name: 'seasons show',
    args: ['<id>'],
    options: {},
    summary: 'a season: its dates, state and close rule (its boards: boards atp --period season:<slug>)',
    details: 'Answers the season.',
    build: ({ positionals: [id] }) => ({ method: 'GET', path: routePath('/admin/seasons/{id}', { id }) }),
    render: (season) => fields(SEASON_COLUMNS.map(([name, cell]) => [name, cell(season)])),
  }),
  readCommand('/admin/webhooks', {
    name: 'webhooks list',
    args: [],
    options: {},
    summary: 'the webhooks (never their secrets), with pending and given-up deliveries',
    details: 'Answers {"items"}.',
    build: () => ({ method: 'GET', path: '/admin/webhooks' }),
    render: page([
      ['id', (r) => r.id],
      ['name', (r) => r.name],
      ['format', (r) => r.format],
      ['events', (r) => r.events.join(' ')],
      ['enabled', (r) => r.enabled],
      ['failingSince', (r) => r.failingSince],
      ['pending', (r) => r.pending],
      ['failed', (r) => r.failed],
      ['disabledReason', (r) => r.disabledReason],
    ]),
  }),
  readCommand('/admin/webhooks/{id}/deliveries', {
    name: 'webhooks deliveries',
    args: ['<id>'],
    options: {
      state: { type: 'string', value: '<pending|delivered|failed>', help: 'only deliveries in this state' },
      ...PAGING,
    },
    summary: "a webhook's delivery log, newest first: state, attempts, last status and error",
    details: 'Answers {"items", "nextCursor"}.',
    build: ({ positionals: [id], values }) => ({
      method: 'GET',
      path: `${routePath('/admin/webhooks/{id}/deliveries', { id })}${query(values, ['state', 'limit', 'cursor'])}`,
    }),
    render: page([
      ['id', (r) => r.id],
      ['type', (r) => r.type],
      ['state', (r) => r.state],
      ['attempts', (r) => r.attempts],
      ['status', (r) => r.lastStatus],
      ['error', (r) => r.lastError],
      ['created', (r) => r.createdAt],
      ['next', (r) => r.nextAttemptAt],
    ]),
  }),
  listCommand(
    'bans list',
    '/admin/bans',
    { uid: { type: 'string', value: '<uid>', help: "only this player's" } },
    'active bans, newest first',
    [
      ['id', (r) => r.banId],
      ['uid', (r) => r.uid],
      ['username', (r) => r.username],
      ['reason', (r) => r.reason],
      ['until', (r) => r.until ?? 'forever'],
      ['created', (r) => r.createdAt],
    ],
  ),
  listCommand(
    'servers list',
    '/admin/servers',
    { online: { type: 'string', value: '<true|false>', help: 'only online (true) or offline (false) servers' } },
    'registered game servers: online, players, plugin version, address, last login, WebSocket, session conflicts of the last 24 h (taken over / kept out / ONLINE refused)',
    [
      ['id', (r) => r.serverID],
      ['name', (r) => r.serverName],
      ['country', (r) => r.country],
      ['online', (r) => (r.online ? 'yes' : 'no')],
      ['players', (r) => r.playersOnline],
      ['plugin', (r) => r.pluginVersion],
      ['address', (r) => r.address],
      ['lastLogin', (r) => r.lastLogin],
      ['websocket', (r) => (r.realtime ? `${r.realtime.instanceId} since ${r.realtime.connectedAt}` : null)],
      [
        'conflicts24h',
        (r) =>
          `${r.sessionConflicts24h.takenOver}/${r.sessionConflicts24h.keptOut}/${r.sessionConflicts24h.onlineRefused}`,
      ],
    ],
  ),
  listCommand(
    'charts list',
    '/admin/charts',
    { active: { type: 'string', value: '<true|false>', help: 'only active (true) or inactive (false) charts' } },
    'charts as stored, inactive and placeholders included',
    [
      ['levelId', (r) => r.levelId],
      ['name', (r) => r.name],
      ['constant', (r) => r.difficultyConstant],
      ['version', (r) => r.version],
      ['active', (r) => (r.active ? 'yes' : 'no')],
      ['placeholder', (r) => (r.placeholder ? 'yes' : 'no')],
      ['notes', (r) => r.notes],
      ['updated', (r) => r.updatedAt],
    ],
  ),
  listCommand(
    'collections list',
    '/admin/collections',
    { type: { type: 'string', value: '<type>', help: 'only this type (title, tag, ...)' } },
    'collection definitions as stored, by key',
    [
      ['key', (r) => r.key],
      ['type', (r) => r.type],
      ['unlockMethod', (r) => r.unlockMethod],
      ['updated', (r) => r.updatedAt],
    ],
  ),
  listCommand(
    'audit list',
    '/admin/audit',
    {
      target: { type: 'string', value: '<target>', help: 'e.g. player:1002, server:7' },
      action: { type: 'string', value: '<action>', help: 'e.g. player.ban' },
      actor: { type: 'string', value: '<name>', help: 'who: a staff name, ADMIN_TOKEN or anonymous' },
    },
    'the audit log of admin writes and sign-ins, newest first',
    [
      ['id', (r) => r.id],
      ['time', (r) => r.time],
      ['action', (r) => r.action],
      ['target', (r) => r.target],
      ['actor', (r) => r.actor],
      ['credential', (r) => r.credential],
      ['from', (r) => r.sourceAddress],
      ['requestId', (r) => r.requestId],
      ['summary', (r) => r.summary],
    ],
  ),
  listCommand(
    'plays list',
    '/admin/plays',
    {
      state: {
        type: 'string',
        value: '<state>',
        help: 'flagged (default: waiting for review), approved, voided or all',
      },
      check: {
        type: 'string',
        value: '<check>',
        help: 'only plays that failed this check (fullCombo, allPerfect, maxCombo, noteCount, perfectAccuracy, accuracy, time)',
      },
      uid: { type: 'string', value: '<uid>', help: "only this player's plays" },
    },
    'stored plays for review, newest first (the flagged queue by default)',
    [
      ['id', (r) => r.id],
      ['uid', (r) => r.uid],
      ['player', (r) => r.username],
      ['level', (r) => r.levelId],
      ['acc', (r) => r.acc],
      ['pass', (r) => (r.pass ? 'yes' : 'no')],
      ['received', (r) => r.receivedAt],
      ['flags', (r) => r.flags.join(',')],
      ['review', (r) => r.review],
      ['counts', (r) => (r.counts ? 'yes' : 'no')],
    ],
  ),
];

/** Tables for the two reads that predate the list commands. */
export const ECONOMY_TABLE = (body: unknown): string => {
  const economy = body as ReadAnswer<'/admin/players/{uid}/economy'>;
  const head = fields([
    ['uid', economy.uid],
    ['wattHour', economy.wattHour],
    ['updated', economy.updatedAt],
  ]);
  const history = table(economy.history, [
    ['id', (h) => h.id],
    ['time', (h) => h.time],
    ['previous', (h) => h.previousWattHour],
    ['wattHour', (h) => h.wattHour],
    ['server', (h) => h.serverID],
  ]);
  return `${head}\n\n${history}${economy.nextBefore ? `\n\nmore: add --before ${cellText(economy.nextBefore)}` : ''}`;
};

/** Every field of each open connection, whatever the service answers (one column per field). */
export const CONNECTIONS_TABLE = (body: unknown): string => {
  const connections = body as ReadAnswer<'/admin/realtime/connections'>;
  const columns = Object.keys(connections[0] ?? {}) as (keyof (typeof connections)[number])[];
  return table(
    connections,
    columns.map((key) => [key, (row) => row[key]]),
  );
};
