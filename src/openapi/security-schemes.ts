/**
 * The names of the OpenAPI security schemes: openapi.ts declares them in the document, the auth
 * decorators (`@AdminAuth()`, `@BootstrapAuth()`, …) put them on the routes. The document owns them,
 * so the auth module depends on openapi/ and not the reverse.
 */
export const SERVER_TOKEN_SCHEME = 'serverAccessToken';
export const BOOTSTRAP_TOKEN_SCHEME = 'bootstrapToken';
export const ADMIN_TOKEN_SCHEME = 'adminToken';
/** A key of the public read API (`/public/v1`), issued by staff through `/admin/api-keys`. */
export const PUBLIC_API_KEY_SCHEME = 'publicApiKey';
