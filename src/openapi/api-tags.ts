/** Tags, in the order /docs shows them. */
export const API_TAGS = {
  server: 'Server',
  player: 'Player',
  catalog: 'Catalog',
  economy: 'Economy',
  resources: 'Resources',
  upload: 'Upload',
  public: 'Public',
  admin: 'Admin',
  health: 'Health',
} as const;

export const TAG_DESCRIPTIONS: Record<string, string> = {
  [API_TAGS.server]: 'Server login with the bootstrap token, token refresh, logout, ping.',
  [API_TAGS.player]:
    'Player login (ONLINE, TOKEN, OFFLINE_REFRESH), options and logout; bound to the calling server session.',
  [API_TAGS.catalog]: 'Collections and charts for the game server; the player unlock sync.',
  [API_TAGS.economy]: 'wattHour balance sync and the wealth ranking.',
  [API_TAGS.resources]:
    'Resource manifest, download links and the pack manifest, served at `assetServer`. Download links (CDN or signed) never carry a token.',
  [API_TAGS.upload]: 'Score upload and its ranking answer.',
  [API_TAGS.public]:
    'The public read API for websites, bots and lobby plugins: boards, charts, players. A key per integration (`/admin/api-keys`), ' +
    'or none where the anonymous tier is on; limits per minute with `RateLimit-*` headers (draft-ietf-httpapi-ratelimit-headers-06), ' +
    '`ETag` / `304` and `Cache-Control`, CORS for the origins the operator lists.',
  [API_TAGS.admin]:
    "Administration. Staff sign in to the console (`POST /admin/session`: a session cookie plus `X-CSRF-Token`) or call with a personal API token; `ADMIN_TOKEN` is the owner's break-glass key. Each route needs a permission of the caller's role (`x-permission`). The whole `/admin` API answers 404 while `ADMIN_TOKEN` is unset.",
  [API_TAGS.health]: 'Liveness and readiness for load balancers and orchestrators; Prometheus metrics.',
};
