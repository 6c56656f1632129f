// The module graph of docs/architecture.md ("Modules"), checked by dependency-cruiser:
// `npm run check:deps` (CI: right after Lint). One graph, one tool: ESLint no longer checks imports.
// It cruises src/ and migrations/; tests, benchmarks and the unit specs beside the code
// (*.spec.ts) may reach into anything they exercise, so the module graph does not apply to them.
// Type-only imports count: a type is a dependency of the reader too.

/**
 * Which top-level folders of src/ each folder may import (besides itself). The table is the graph:
 * it has no cycle (each folder lists only folders above it here), so neither can the code.
 * Imports of a package, of node: modules and the wiring at the root of src/ are not in it.
 */
const MODULES = {
  // Foundation: knows no feature module; every feature depends on it.
  config: [],
  common: ['config'], // errors, filter, pipes, http helpers, throttling, Redis, the event bus (common/events)
  database: ['config', 'common'],
  // Declarations every controller reads: the API tags and security scheme names (openapi/).
  // openapi.ts, which builds the document, reads only common and config.
  openapi: ['config', 'common'],
  // Features. Each reaches another through that module's service (no-foreign-repository).
  auth: ['config', 'common', 'database', 'openapi'],
  // The audit log: the @Audited decorator every admin controller reads, and GET /admin/audit, which
  // declares @AdminAuth() like every route (deny by default).
  audit: ['common', 'database', 'openapi', 'auth'],
  // Staff accounts, console sessions, personal API tokens: the AuthGuard reaches them through the
  // StaffCredentials port auth declares (auth/staff-credentials.ts), not by importing staff.
  staff: ['config', 'common', 'database', 'openapi', 'audit', 'auth'],
  // Outgoing webhooks: most events are written by triggers; player writes bans through its service.
  webhooks: ['config', 'common', 'database', 'openapi', 'audit', 'auth'],
  server: ['config', 'common', 'database', 'openapi', 'audit', 'auth'],
  catalog: ['config', 'common', 'database', 'openapi', 'audit', 'auth'], // knows neither upload nor economy
  // Ranks and boards: the rank index and its sources, the all-time and period boards, seasons. It
  // never imports upload (ranking-does-not-know-upload); upload writes ranks through its surface.
  // + player's ban predicate (shared-sql-fragment)
  ranking: ['config', 'common', 'database', 'openapi', 'audit', 'auth', 'catalog', 'server'],
  player: ['config', 'common', 'database', 'openapi', 'audit', 'auth', 'catalog', 'server', 'webhooks'],
  economy: ['config', 'common', 'database', 'openapi', 'audit', 'auth'], // + player's ban predicate (shared-sql-fragment)
  upload: ['config', 'common', 'database', 'openapi', 'audit', 'auth', 'catalog', 'ranking'], // + player's ban predicate (shared-sql-fragment)
  resources: ['config', 'common', 'database', 'openapi', 'audit', 'auth'],
  // Nothing but the wiring and observability depends on realtime.
  realtime: ['config', 'common', 'database', 'openapi', 'auth', 'player', 'server', 'webhooks'],
  admin: [
    'config',
    'common',
    'database',
    'openapi',
    'audit',
    'auth',
    'catalog',
    'economy',
    'player',
    'server',
    'ranking',
    'upload',
  ],
  // The public read API and its keys: boards from ranking, ratings and history from upload, players
  // from player, charts and titles from catalog, the optional balance from economy, each through its service.
  public: [
    'config',
    'common',
    'database',
    'openapi',
    'audit',
    'auth',
    'catalog',
    'economy',
    'player',
    'ranking',
    'upload',
  ],
  // Export and erasure of one player: its repository runs player-data.map.ts over every module's
  // rows of the player (one transaction); the ranks through upload's RatingRecomputeService; the
  // period archive's block size (ARCHIVE_BLOCK) through ranking's surface, to find a player's blocks.
  privacy: ['config', 'common', 'database', 'openapi', 'audit', 'auth', 'ranking', 'upload'],
  // Purges of old rows: its repository runs retention.map.ts over every module's old rows (one map,
  // held against the schema); upload's NEVER_COUNTS_RECORD says which plays can go.
  retention: ['config', 'common', 'database', 'upload'],
  health: ['config', 'common', 'database', 'openapi', 'auth'],
  // Nothing depends on observability; it reads auth, realtime, upload and ranking (the board
  // windows counted in SQL) at scrape time, and the player login modes (a label of the login counter).
  observability: [
    'config',
    'common',
    'database',
    'openapi',
    'auth',
    'player',
    'ranking',
    'realtime',
    'upload',
    'webhooks',
    'retention',
  ],
  console: ['config', 'common'],
  // The public leaderboard site's files, theme and settings (the page reads the public API over HTTP).
  site: ['config', 'common'],
  // The typed admin client (openapi-fetch over the types generated from the OpenAPI document,
  // `npm run client:generate`): the console and the CLI call the admin API through it. It knows no
  // module: the document is a file, not an import of the app.
  'admin-client': [],
  // The admin CLI and the migration runner: processes of their own, not part of the Nest app.
  cli: ['config', 'common', 'database', 'admin-client'],
};

const FOLDERS = Object.keys(MODULES);
// The table stays free of cycles: a row lists only folders of the rows above it.
FOLDERS.forEach((module, row) => {
  for (const dependency of MODULES[module]) {
    const above = FOLDERS.indexOf(dependency);
    if (above < 0 || above >= row)
      throw new Error(`.dependency-cruiser.js: ${module} lists ${dependency}, which is not a row above it`);
  }
});
const SPEC = '\\.spec\\.ts$';
const folders = (names) => `^src/(${names.join('|')})/`;

/** One rule per folder: it imports only itself and the folders its row lists. */
const moduleRules = Object.entries(MODULES).map(([module, allowed]) => ({
  name: `module-graph-${module}`,
  severity: 'error',
  comment: `src/${module}/ may import only ${allowed.length === 0 ? 'itself' : `src/{${allowed.join(',')}}/`} (docs/architecture.md "Modules").`,
  from: { path: `^src/${module}/`, pathNot: ['^src/[^/]+/entities/', SPEC] },
  to: {
    path: '^src/',
    pathNot: [
      folders([module, ...allowed]),
      // Documented exceptions, each a rule of its own below.
      ...(['economy', 'ranking', 'upload'].includes(module) ? ['^src/player/active-ban\\.rule\\.ts$'] : []),
    ],
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle between files (the module table has none between folders).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unknown-folder',
      severity: 'error',
      comment:
        'A new top-level folder of src/ gets a row in MODULES (.dependency-cruiser.js) and docs/architecture.md first.',
      from: { path: '^src/[^/]+/', pathNot: folders(FOLDERS) },
      to: {},
    },
    ...moduleRules,
    {
      name: 'no-foreign-repository',
      severity: 'error',
      comment:
        "A service, controller or guard calls another module's service, never its repository. Repositories " +
        'may share SQL fragments (shared-sql-fragment).',
      from: { path: '^src/([^/]+)/', pathNot: ['\\.repository\\.ts$', SPEC] },
      to: { path: '\\.repository\\.ts$', pathNot: '^src/$1/' },
    },
    {
      // Documented in docs/architecture.md ("economy", "ranking", "upload"): their ranking SQL leaves out
      // banned players with the player module's activeBanPredicate, read only, from the rule's one file
      // (player/active-ban.rule.ts; module-graph-*), and only in repositories (and ranking's rank-sql.ts,
      // the ban check its repositories and the upload's share).
      name: 'shared-sql-fragment',
      severity: 'error',
      comment:
        "Only economy's, ranking's and upload's repositories (and ranking/rank-sql.ts) read the player module's active-ban rule (its SQL fragments).",
      from: {
        path: '^src/(economy|ranking|upload)/',
        pathNot: ['\\.repository\\.ts$', '^src/ranking/rank-sql\\.ts$', SPEC],
      },
      to: { path: '^src/player/active-ban\\.rule\\.ts$' },
    },
    {
      name: 'ranking-does-not-know-upload',
      severity: 'error',
      comment:
        'Upload imports ranking, never the reverse (issue #47 item 2): not even a unit spec of ranking imports src/upload/.',
      from: { path: '^src/ranking/' },
      to: { path: '^src/upload/' },
    },
    {
      name: 'ranking-surface',
      severity: 'error',
      comment:
        'Outside src/ranking/, code imports ranking through src/ranking/index.ts only (its entities for a relation type; ' +
        'the two leaf files rating-scale.ts and ranking.types.ts, which import nothing, so a pure rule or a script need not ' +
        "load the whole module through index.ts; upload's repositories also read ranking/rank-sql.ts: ranking-sql-surface).",
      from: { path: '^src/', pathNot: ['^src/ranking/', SPEC] },
      to: {
        path: '^src/ranking/',
        pathNot: [
          '^src/ranking/index\\.ts$',
          '^src/ranking/(rating-scale|ranking\\.types)\\.ts$',
          '^src/ranking/rank-sql\\.ts$',
          '^src/ranking/entities/',
        ],
      },
    },
    {
      name: 'ranking-leaves-import-nothing',
      severity: 'error',
      comment:
        'rating-scale.ts and ranking.types.ts stay leaves (they are part of the surface because they load nothing).',
      from: { path: '^src/ranking/(rating-scale|ranking\\.types)\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'ranking-sql-surface',
      severity: 'error',
      comment:
        "ranking/rank-sql.ts (the rank keys' SQL fragments and row mappers, the ban check, the period lock) is read only by upload's repositories.",
      from: { path: '^src/', pathNot: ['^src/ranking/', '^src/upload/.+\\.repository\\.ts$', SPEC] },
      to: { path: '^src/ranking/rank-sql\\.ts$' },
    },
    {
      name: 'entities-reference-entities',
      severity: 'error',
      comment:
        "An entity imports its own module's files, common/, or another module's entity for a foreign key " +
        '(docs/architecture.md "Modules").',
      from: { path: '^src/([^/]+)/entities/' },
      to: { path: '^src/', pathNot: ['^src/$1/', '^src/[^/]+/entities/', '^src/common/'] },
    },
    {
      name: 'foreign-entity-references-are-type-only',
      severity: 'error',
      comment:
        "Another module's entity is named for a relation's type only (`import type`); the relation itself names it by string.",
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/entities/', pathNot: '^src/$1/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'modules-do-not-import-the-wiring',
      severity: 'error',
      comment:
        'main.ts, app.module.ts and app.factory.ts wire the modules; no module imports them (take an interface instead).',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'migrations-are-self-contained',
      severity: 'error',
      comment: 'A migration is history: it imports TypeORM only, never src/ code that may change after it ran.',
      from: { path: '^migrations/' },
      to: { path: '^(src|test|bench)/' },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A file nothing imports and that imports nothing is dead code (entry points import something).',
      from: { orphan: true, pathNot: ['\\.d\\.ts$', '\\.spec\\.ts$'] },
      to: {},
    },
    {
      name: 'not-to-dev-dependency',
      severity: 'error',
      comment:
        'The production image installs without devDependencies (npm ci --omit=dev): src/ and migrations/ import none.',
      from: { path: '^(src|migrations)/', pathNot: SPEC },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-undeclared-package',
      severity: 'error',
      comment: 'Every package src/ imports is in package.json (not only present as a transitive dependency).',
      from: { path: '^(src|migrations)/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-spec',
      severity: 'error',
      comment: 'No code imports a unit spec.',
      from: {},
      to: { path: '\\.spec\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
