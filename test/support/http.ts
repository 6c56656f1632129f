export interface HttpResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  /** Bearer token; `null` sends no Authorization header. */
  token?: string | null;
  body?: unknown;
  /** Sent as-is (for malformed JSON and size tests). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
}

/** A small real-HTTP client (global fetch) that speaks the plugin's wire rules. */
export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly defaultToken: string | null = null,
    /** Sent with every request unless the request gives its own (a console session's cookie and CSRF token). */
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  withToken(token: string | null): HttpClient {
    return new HttpClient(this.baseUrl, token, this.defaultHeaders);
  }

  withHeaders(headers: Record<string, string>): HttpClient {
    return new HttpClient(this.baseUrl, this.defaultToken, { ...this.defaultHeaders, ...headers });
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = {
      'User-Agent': 'rhythmc-plugin-test/1.0 node/20',
      ...this.defaultHeaders,
      ...options.headers,
    };
    const token = options.token === undefined ? this.defaultToken : options.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
      headers['Content-Type'] ??= 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('application/json') && text.length > 0) {
      parsed = JSON.parse(text);
    }
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }

  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }

  put<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PUT', path, { ...options, body });
  }

  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }
}
