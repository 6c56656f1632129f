/**
 * The names of the OpenAPI security schemes: openapi.ts declares them in the document, the auth
 * decorators (`@AdminAuth()`, `@BootstrapAuth()`, …) put them on the routes. The document owns them,
 * so the auth module depends on openapi/ and not the reverse.
 */
export const SERVER_TOKEN_SCHEME = 'serverAccessToken';
export const BOOTSTRAP_TOKEN_SCHEME = 'bootstrapToken';
export const ADMIN_TOKEN_SCHEME = 'adminToken';
/** A console session: the HttpOnly cookie `rhythmc_session`, together with its X-CSRF-Token header. */
export const STAFF_SESSION_SCHEME = 'staffSession';
export const CSRF_TOKEN_SCHEME = 'csrfToken';
/** The name of the console session's cookie (the auth module sets and reads it). */
export const STAFF_SESSION_COOKIE = 'rhythmc_session';
/** A key of the public read API (`/public/v1`), issued by staff through `/admin/api-keys`. */
export const PUBLIC_API_KEY_SCHEME = 'publicApiKey';
