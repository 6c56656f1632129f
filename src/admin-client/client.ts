/**
 * The one typed client of the admin API (docs/architecture.md "Admin client"), shared by the web
 * console (console/src/api.ts) and the admin CLI (src/cli): openapi-fetch over the types that
 * openapi-typescript generates from the service's OpenAPI document (schema.ts, from openapi.json;
 * `npm run client:generate`). A path, a query parameter, a body or an answer the document does not
 * have is a type error in both.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths } from './schema';

/** The response and body DTOs of the document, by schema name: `Schemas['AdminBanPage']`. */
export type Schemas = components['schemas'];

/** The typed client: `admin.GET('/admin/bans', { params: { query: { limit: 50 } } })`. */
export type AdminClient = Client<paths>;

export function createAdminClient(options: ClientOptions = {}): AdminClient {
  return createClient<paths>(options);
}

/** An answer other than 2xx, worded as the API words it (`{error, message}`, decisions.md §2). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's other fields (e.g. `errors` of a 400, secondFactor on a sign-in that needs a code). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** "401 UNAUTHORIZED: Invalid admin token" */
  override toString(): string {
    return `${this.status} ${this.code}: ${this.message}`;
  }
}

/** The ApiError of an answer other than 2xx, from its status and body (parsed JSON or text). */
function apiError(response: Response, body: unknown): ApiError {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof fields.error === 'string' ? fields.error : response.statusText || 'ERROR';
  const message =
    typeof fields.message === 'string'
      ? fields.message
      : (typeof body === 'string' ? body.slice(0, 200) : '') || `HTTP ${response.status}`;
  const { error: _code, message: _message, ...details } = fields;
  return new ApiError(response.status, code, message, details);
}

/** What openapi-fetch answers: the typed body of a 2xx, or the error body. */
type Answer<D> = { data?: D; error?: unknown; response: Response };

/**
 * The body of a 2xx answer (undefined for a 204), else an ApiError; a network failure is one too
 * (status 0, code NETWORK).
 */
export async function ok<D>(pending: Promise<Answer<D>>): Promise<D> {
  let answer: Answer<D>;
  try {
    answer = await pending;
  } catch (error) {
    throw new ApiError(
      0,
      'NETWORK',
      `The service did not answer (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (!answer.response.ok) throw apiError(answer.response, answer.error);
  return answer.data as D;
}
