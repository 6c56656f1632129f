/**
 * The wire side of one simulated game server: HTTP calls as the plugin makes them (keep-alive,
 * the plugin's headers) and its WebSocket (decisions.md §7). Every call is timed and recorded in
 * the metrics under a stable name (`POST /player/upload`, `ws resume_session`).
 */
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import WebSocket from 'ws';
import type { Metrics } from './metrics';

export const PLUGIN_USER_AGENT = 'rhythmc-simulator/1.0 node/20';
const REQUEST_TIMEOUT_MS = 30_000;

export interface Answer<T = any> {
  status: number;
  body: T;
  text: string;
  ms: number;
  /** The status was one of the expected ones. */
  ok: boolean;
  headers: Record<string, string | string[] | undefined>;
}

export interface CallOptions {
  /** The bearer token, or a function giving the current one at each attempt. */
  token?: string | null | (() => string | null);
  body?: unknown;
  /** Statuses that count as expected (default [200]). */
  expect?: number[];
  /** On 429, wait Retry-After and try again (as the plugin does), at most this many times. */
  retries429?: number;
  /**
   * Called with an unexpected answer of the first attempt: a reason to send the call once more
   * (counted as an event, not as an answer), or null to keep the answer.
   */
  retryIf?: (answer: Answer) => string | null;
  /** What to add to the record of an unexpected answer (the caller's last token events). */
  context?: () => string;
}

/** A transport error, with whether it happened on a kept-alive socket reused from the pool. */
class TransportError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly reusedSocket: boolean,
  ) {
    super(message);
  }
}

function rawRequest(
  agent: Agent | HttpsAgent,
  url: URL,
  method: string,
  headers: Record<string, string | number>,
  body: string | undefined,
) {
  return new Promise<{ status: number; text: string; headers: Answer['headers'] }>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : request;
    const outgoing = send(url, { agent, method, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
      );
      res.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      reject(new TransportError(error.message, error.code, outgoing.reusedSocket)),
    );
    outgoing.end(body);
  });
}

export class PluginHttp {
  private readonly agent: Agent | HttpsAgent;

  constructor(
    readonly baseUrl: string,
    private readonly metrics: Metrics,
    maxSockets = 8,
  ) {
    this.agent = baseUrl.startsWith('https:')
      ? new HttpsAgent({ keepAlive: true, maxSockets })
      : new Agent({ keepAlive: true, maxSockets });
  }

  /**
   * One call, recorded as `name`; transport failures answer status 0 (recorded as "error"). A
   * kept-alive connection the server closed just as it was reused is retried once, as pooling
   * HTTP clients (OkHttp, the JDK's) do.
   */
  async call<T = any>(name: string, method: string, path: string, options: CallOptions = {}): Promise<Answer<T>> {
    const expect = options.expect ?? [200];
    let retried = false;
    for (let attempt = 0; ; attempt++) {
      const answer = await this.once<T>(method, path, options);
      const reason = retried
        ? null
        : answer.stale
          ? 'stale kept-alive connection'
          : !expect.includes(answer.status) && options.retryIf
            ? options.retryIf(answer)
            : null;
      if (reason !== null) {
        retried = true;
        this.metrics.event(`${name}: sent again (${reason})`);
        continue;
      }
      if (answer.status === 429 && attempt < (options.retries429 ?? 0)) {
        this.record(name, answer, expect, options.context);
        const retryAfter = Number(answer.headers['retry-after']);
        await new Promise((resolve) =>
          setTimeout(resolve, (Number.isFinite(retryAfter) ? Math.min(retryAfter, 60) : 1) * 1000),
        );
        continue;
      }
      return this.record(name, answer, expect, options.context);
    }
  }

  private record<T>(
    name: string,
    answer: Answer<T> & { stale?: boolean },
    expect: number[],
    context?: () => string,
  ): Answer<T> {
    const ok = expect.includes(answer.status);
    const status = answer.status === 0 ? (answer.text === 'timeout' ? 'timeout' : 'error') : answer.status;
    this.metrics.record(
      name,
      status,
      answer.ms,
      !ok,
      ok ? undefined : `${answer.text.slice(0, 200)}${context ? ` | ${context()}` : ''}`,
    );
    return { ...answer, ok };
  }

  private async once<T>(method: string, path: string, options: CallOptions): Promise<Answer<T> & { stale: boolean }> {
    const headers: Record<string, string | number> = {
      'User-Agent': PLUGIN_USER_AGENT,
      'Content-Type': 'application/json',
    };
    const token = typeof options.token === 'function' ? options.token() : options.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
    const started = performance.now();
    try {
      const raw = await rawRequest(this.agent, new URL(path, this.baseUrl), method, headers, body);
      const ms = performance.now() - started;
      let parsed: unknown = raw.text;
      if (String(raw.headers['content-type'] ?? '').includes('json') && raw.text.length > 0) {
        try {
          parsed = JSON.parse(raw.text);
        } catch {
          // a malformed JSON body stays text; the caller's shape check reports it
        }
      }
      return {
        status: raw.status,
        body: parsed as T,
        text: raw.text,
        ms,
        ok: true,
        headers: raw.headers,
        stale: false,
      };
    } catch (error) {
      const ms = performance.now() - started;
      const message = error instanceof Error ? error.message : String(error);
      const stale =
        error instanceof TransportError &&
        error.reusedSocket &&
        (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      return { status: 0, body: null as T, text: message, ms, ok: false, headers: {}, stale };
    }
  }

  destroy(): void {
    this.agent.destroy();
  }
}

export interface Frame {
  event: string;
  data: any;
}

interface PendingResume {
  resolve: (ack: { ok: boolean; data: any }) => void;
  started: number;
  timer: NodeJS.Timeout;
}

/** The game server's WebSocket: resume_session with its acks matched by uid, chat, kicks and close codes. */
export class PluginSocket {
  private readonly pending = new Map<number, PendingResume[]>();
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Called for every frame other than resume_session acks. */
  onFrame: (frame: Frame) => void = () => undefined;
  private isClosed = false;

  private constructor(
    readonly socket: WebSocket,
    private readonly metrics: Metrics,
  ) {
    socket.on('message', (raw: WebSocket.RawData) => this.receive(raw));
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.isClosed = true;
        // The service closed the socket (4001 token refresh, 4002, shutdown) with acks pending: the
        // plugin resends at its next interval, so these are counted as "closed", not as unexpected.
        for (const queue of this.pending.values())
          for (const entry of queue) this.settle(entry, { ok: false, data: { error: 'CLOSED' } }, 'closed', false);
        this.pending.clear();
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  /** Opens `/ws` with the server access token; records `ws connect` (101 when upgraded, else the refusal's status). */
  static connect(wsUrl: string, token: string, metrics: Metrics, expectRefusal = false): Promise<PluginSocket | null> {
    const started = performance.now();
    return new Promise((resolve) => {
      const socket = new WebSocket(wsUrl, {
        headers: { Authorization: `Bearer ${token}`, 'User-Agent': PLUGIN_USER_AGENT },
        handshakeTimeout: REQUEST_TIMEOUT_MS,
      });
      let settled = false;
      const done = (status: number | string, value: PluginSocket | null, detail?: string) => {
        if (settled) return;
        settled = true;
        const ok = expectRefusal ? status === 401 : status === 101;
        metrics.record('ws connect', status, performance.now() - started, !ok, detail);
        resolve(value);
      };
      const client = new PluginSocket(socket, metrics);
      socket.once('open', () => done(101, client));
      socket.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => done(res.statusCode ?? 0, null, text));
        res.on('error', () => done(res.statusCode ?? 0, null, text));
      });
      socket.once('error', (error) => done('error', null, error.message));
    });
  }

  get open(): boolean {
    return !this.isClosed && this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends resume_session and waits for its ack (recorded as `ws resume_session`, unexpected unless ok). */
  resume(uid: number, accessToken: string, timeoutMs = 30_000): Promise<{ ok: boolean; data: any }> {
    return new Promise((resolve) => {
      if (!this.open) {
        this.metrics.record('ws resume_session', 'closed', 0, true, `uid ${uid}`);
        resolve({ ok: false, data: { error: 'CLOSED' } });
        return;
      }
      const entry: PendingResume = {
        resolve,
        started: performance.now(),
        timer: setTimeout(() => {
          const queue = this.pending.get(uid) ?? [];
          const index = queue.indexOf(entry);
          if (index >= 0) queue.splice(index, 1);
          this.settle(entry, { ok: false, data: { error: 'TIMEOUT' } }, 'timeout');
        }, timeoutMs),
      };
      const queue = this.pending.get(uid) ?? [];
      queue.push(entry);
      this.pending.set(uid, queue);
      this.socket.send(JSON.stringify({ event: 'resume_session', data: { uid, accessToken } }));
    });
  }

  chat(uid: number, message: string): void {
    if (this.open) this.socket.send(JSON.stringify({ event: 'chat', data: { uid, message } }));
  }

  close(): void {
    this.socket.close();
  }

  terminate(): void {
    this.socket.terminate();
  }

  private settle(entry: PendingResume, ack: { ok: boolean; data: any }, status: string, unexpected = !ack.ok): void {
    clearTimeout(entry.timer);
    this.metrics.record(
      'ws resume_session',
      status,
      performance.now() - entry.started,
      unexpected,
      ack.ok ? undefined : JSON.stringify(ack.data),
    );
    entry.resolve(ack);
  }

  private receive(raw: WebSocket.RawData): void {
    let frame: Frame;
    try {
      frame = JSON.parse(Buffer.from(raw as Buffer).toString('utf8')) as Frame;
    } catch {
      this.metrics.event('ws malformed frame');
      return;
    }
    if (frame.event === 'resume_session' && frame.data && typeof frame.data === 'object') {
      const uid = Number(frame.data.uid);
      const queue = this.pending.get(uid);
      const entry = queue?.shift();
      if (entry)
        this.settle(
          entry,
          { ok: frame.data.ok === true, data: frame.data },
          frame.data.ok === true ? 'ok' : String(frame.data.error ?? 'not ok'),
        );
      else this.metrics.event('ws unmatched resume ack');
      return;
    }
    this.metrics.event(`ws frame ${frame.event}`);
    this.onFrame(frame);
  }
}
