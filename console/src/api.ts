import { ApiError, createAdminClient, ok, type Schemas } from '../../src/admin-client/client';

export { ApiError, ok, type Schemas };

/**
 * The admin API client of the console. The session is the service's HttpOnly cookie, which this
 * script never sees; every call echoes the session's CSRF token (the readable `rhythmc_csrf`
 * cookie) as X-CSRF-Token. Nothing is kept in sessionStorage or localStorage.
 */

const CSRF_COOKIE = 'rhythmc_csrf';
/** Dispatched on window when the service says the session has ended (401): back to the sign-in. */
export const SIGNED_OUT_EVENT = 'rhythmc:signed-out';

function csrfToken(): string {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CSRF_COOKIE) return value.join('=');
  }
  return '';
}

/** The query string of a call: a filter left empty (undefined or '') is not sent. */
function querySerializer(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value !== ''))
      params.set(name, String(value));
  return params.toString();
}

/**
 * The typed admin client (src/admin-client, generated from the service's OpenAPI document) in the
 * signed-in session: same-origin cookies, no cache, the CSRF token on every call; a 401 (the
 * session ended) fires SIGNED_OUT_EVENT. Read its answers with ok(): the 2xx body, else an ApiError.
 */
export const admin = createAdminClient({ credentials: 'same-origin', cache: 'no-store', querySerializer });
admin.use({
  onRequest({ request }) {
    request.headers.set('X-CSRF-Token', csrfToken());
    if (!request.headers.has('Accept')) request.headers.set('Accept', 'application/json');
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && new URL(request.url).pathname !== '/admin/session')
      window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
    return response;
  },
});

/** A file the API answered (a backup): its bytes, the name its Content-Disposition gives, and its headers. */
export interface Download {
  blob: Blob;
  filename: string;
  headers: Headers;
}

/** Takes a backup of the database (POST /admin/database/backup, a file); its errors are worded as ok()'s. */
export async function downloadBackup(): Promise<Download> {
  const pending = admin.POST('/admin/database/backup', {
    parseAs: 'blob',
    headers: { Accept: 'application/gzip, application/octet-stream, application/json' },
  });
  // A refusal is read as JSON whatever parseAs says (the §2 body): ok() throws it as an ApiError.
  const blob = await ok(pending);
  const { response } = await pending;
  const filename = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'download';
  return { blob, filename, headers: response.headers };
}

/** Who is signed in (GET /admin/me, and the sign-in's answer). */
export type Me = Schemas['MeResponse'];

/** `code`: the authenticator code, once the service asked for one (ApiError details.secondFactor). */
export function signIn(name: string, password: string, code?: string): Promise<Me> {
  return ok(admin.POST('/admin/session', { body: code === undefined ? { name, password } : { name, password, code } }));
}

/** Ends the session on the service (the cookie then authorizes nothing). */
export function signOut(): Promise<void> {
  return ok(admin.DELETE('/admin/session'));
}

/** One entry of a 400's `errors`: the field (inside entry `index` of a batch) and what is wrong with it. */
export interface FieldProblem {
  index?: number;
  field: string;
  message: string;
}

/** The `errors` of a 400 (every BAD_REQUEST body lists its problems by field); [] for any other answer. */
export function fieldProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError) || error.status !== 400 || !Array.isArray(error.details.errors)) return [];
  return (error.details.errors as unknown[]).filter(
    (entry): entry is FieldProblem =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as FieldProblem).field === 'string' &&
      typeof (entry as FieldProblem).message === 'string',
  );
}

/** `field: problem` lines of a batch 400, by entry (`errors` with an index); null when there are none. */
export function batchProblems(error: unknown): Map<number, string[]> | null {
  const problems = new Map<number, string[]>();
  for (const { index, field, message } of fieldProblems(error)) {
    if (index === undefined) continue;
    problems.set(index, [...(problems.get(index) ?? []), field ? `${field}: ${message}` : message]);
  }
  return problems.size > 0 ? problems : null;
}

/**
 * Text where the API takes a number (an id from the page's address such as `#/players/1002`, a
 * number field of a form), sent exactly as written: the service checks it and answers 400 or 404,
 * shown as is. The one place where text stands in for a number of the generated types.
 */
export const typedNumber = (text: string): number => text as unknown as number;
