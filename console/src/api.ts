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

/** An answer other than 2xx, worded as the API words it (`{error, message}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's other fields (e.g. secondFactor on a sign-in that needs a code). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** "401 UNAUTHORIZED: Invalid admin token" */
  override toString(): string {
    return `${this.status} ${this.code}: ${this.message}`;
  }
}

type Query = Record<string, string | number | undefined>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** Sends one admin call in the signed-in session, echoing the CSRF token; a network failure is an ApiError too. */
async function send(
  method: string,
  path: string,
  accept: string,
  options: { query?: Query; body?: unknown },
): Promise<Response> {
  const headers: Record<string, string> = { Accept: accept, 'X-CSRF-Token': csrfToken() };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    return await fetch(withQuery(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(
      0,
      'NETWORK',
      `The service did not answer (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/** The ApiError of an answer other than 2xx (its body's text given); a 401 also fires SIGNED_OUT_EVENT. */
function failure(response: Response, path: string, text: string): ApiError {
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const error = body as { error?: unknown; message?: unknown } | null;
  const code = typeof error?.error === 'string' ? error.error : response.statusText || 'ERROR';
  const message = typeof error?.message === 'string' ? error.message : text.slice(0, 200) || `HTTP ${response.status}`;
  if (response.status === 401 && path !== '/admin/session') window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
  const { error: _code, message: _message, ...details } = (error ?? {}) as Record<string, unknown>;
  return new ApiError(response.status, code, message, details);
}

/** Calls the admin API in the signed-in session; a 401 (the session ended) also fires SIGNED_OUT_EVENT. */
export async function api<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown } = {},
): Promise<T> {
  const response = await send(method, path, 'application/json', options);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  if (!response.ok) throw failure(response, path, text);
  try {
    return (text ? JSON.parse(text) : null) as T;
  } catch {
    return null as T;
  }
}

/** A file the API answered (a backup): its bytes, the name its Content-Disposition gives, and its headers. */
export interface Download {
  blob: Blob;
  filename: string;
  headers: Headers;
}

/** Calls an admin route that answers a file; its errors are worded as api()'s. */
export async function download(method: string, path: string): Promise<Download> {
  const response = await send(method, path, 'application/octet-stream, application/gzip, application/json', {});
  if (!response.ok) throw failure(response, path, await response.text());
  const blob = await response.blob();
  const filename = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'download';
  return { blob, filename, headers: response.headers };
}

/** Who is signed in (GET /admin/me, and the sign-in's answer). */
export interface Me {
  name: string;
  accountId: number | null;
  role: string;
  permissions: string[];
  credential: 'ADMIN_TOKEN' | 'session' | 'token';
  session: { expiresAt: string; idleTimeoutSeconds: number } | null;
  timeZone: string;
  /** Whether sign-in asks this account for an authenticator code. */
  secondFactor: boolean;
}

/** `code`: the authenticator code, once the service asked for one (ApiError details.secondFactor). */
export function signIn(name: string, password: string, code?: string): Promise<Me> {
  return api<Me>('POST', '/admin/session', {
    body: code === undefined ? { name, password } : { name, password, code },
  });
}

/** Ends the session on the service (the cookie then authorizes nothing). */
export function signOut(): Promise<void> {
  return api<void>('DELETE', '/admin/session');
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
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
