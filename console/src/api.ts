/** The admin API client of the console: the token lives in this tab's sessionStorage only. */

const TOKEN_KEY = 'rhythmc.adminToken';

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** An answer other than 2xx, worded as the API words it (`{error, message}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
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

/** Calls the admin API with the token given (login) or the stored one. */
export async function api<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown; token?: string } = {},
): Promise<T> {
  const token = options.token ?? storedToken() ?? '';
  const headers: Record<string, string> = { Accept: 'application/json', Authorization: `Bearer ${token}` };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(
      0,
      'NETWORK',
      `The service did not answer (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = body as { error?: unknown; message?: unknown } | null;
    const code = typeof error?.error === 'string' ? error.error : response.statusText || 'ERROR';
    const message =
      typeof error?.message === 'string' ? error.message : text.slice(0, 200) || `HTTP ${response.status}`;
    throw new ApiError(response.status, code, message);
  }
  return body as T;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `[index] field: problem` lines of a batch 400, by entry; null when the message is not of that form. */
export function batchProblems(message: string): Map<number, string[]> | null {
  const problems = new Map<number, string[]>();
  for (const part of message.split('; ')) {
    const match = /^\[(\d+)\] (.*)$/s.exec(part);
    if (!match) continue;
    const index = Number(match[1]);
    problems.set(index, [...(problems.get(index) ?? []), match[2]]);
  }
  return problems.size > 0 ? problems : null;
}
