import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AuthService } from '../auth/auth.service';
import { errorCodeOf } from '../common/filters/all-exceptions.filter';
import { PLAYER_LOGIN_MODES } from '../player/dto/player-login.dto';
import { RealtimeService } from '../realtime/realtime.service';
import { processMetrics } from './process-metrics';

export const METRICS_ROUTE = '/metrics';

/** Seconds; most calls answer in 1–50 ms, uploads and manifests can take longer under load. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const LOGIN_MODES = new Set<string>(PLAYER_LOGIN_MODES);

/** `ok`, or the wire error code of the answer (`UNAUTHORIZED`, `BANNED`, …). */
function resultOf(response: Response): string {
  if (!response.writableFinished) return 'aborted';
  if (response.statusCode < 400) return 'ok';
  return errorCodeOf(response) ?? String(response.statusCode);
}

/** The player login mode the caller asked for, when it is one of the three; `-` otherwise (bounded labels). */
function loginModeOf(body: unknown): string {
  const mode = typeof body === 'object' && body !== null ? (body as { mode?: unknown }).mode : undefined;
  return typeof mode === 'string' && LOGIN_MODES.has(mode) ? mode : '-';
}

/**
 * This app's Prometheus metrics, in its own registry (several apps share a test process). Request
 * metrics are recorded when a response ends; the gauges are read at scrape time.
 */
@Injectable()
export class MetricsService {
  private readonly logger = new Logger('Metrics');
  private readonly registry = new Registry();
  /** Gauges read from the database: left out of a scrape when the database does not answer. */
  private readonly sessionRegistry = new Registry();

  private readonly requests = new Counter({
    name: 'rhythmc_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status (route "unmatched" when no route matched).',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'rhythmc_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its response, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  private readonly logins = new Counter({
    name: 'rhythmc_logins_total',
    help: 'Server and player login attempts by kind, player login mode ("-" for servers) and result ("ok" or the error code).',
    labelNames: ['kind', 'mode', 'result'] as const,
    registers: [this.registry],
  });

  private readonly uploads = new Counter({
    name: 'rhythmc_uploads_total',
    help: 'Score uploads (POST /player/upload) by result ("ok" or the error code).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly ignoredFields = new Counter({
    name: 'rhythmc_ignored_body_fields_total',
    help: 'Unknown fields the plugin sent in a request body and the service ignored, by body type (a plugin newer than the service).',
    labelNames: ['body'] as const,
    registers: [this.registry],
  });

  private readonly websocketConnections = new Gauge({
    name: 'rhythmc_websocket_connections',
    help: 'Open WebSocket connections of game servers on this instance.',
    registers: [this.registry],
  });

  private readonly liveServerSessions = new Gauge({
    name: 'rhythmc_server_sessions_live',
    help: 'Server sessions neither ended nor expired (the whole deployment: every instance reports the same value).',
    registers: [this.sessionRegistry],
  });

  private readonly livePlayerSessions = new Gauge({
    name: 'rhythmc_player_sessions_live',
    help: 'Player sessions neither logged out nor expired (the whole deployment: every instance reports the same value).',
    registers: [this.sessionRegistry],
  });

  /** Node's process metrics, shared by the apps of the process; created at start so CPU counts from then. */
  private readonly process = processMetrics();

  constructor(
    private readonly auth: AuthService,
    private readonly realtime: RealtimeService,
  ) {}

  /** Records one answered request; called when its response closes. Scrapes are not counted. */
  observeRequest(request: Request, response: Response, route: string, seconds: number): void {
    if (route === METRICS_ROUTE) return;
    const labels = { method: request.method, route, status: response.writableFinished ? String(response.statusCode) : 'aborted' };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
    if (request.method !== 'POST') return;
    if (route === '/server/login') this.logins.inc({ kind: 'server', mode: '-', result: resultOf(response) });
    else if (route === '/player/login') this.logins.inc({ kind: 'player', mode: loginModeOf(request.body), result: resultOf(response) });
    else if (route === '/player/upload') this.uploads.inc({ result: resultOf(response) });
  }

  /** Unknown fields of a plugin body that validation stripped. */
  countIgnoredFields(body: string, count: number): void {
    this.ignoredFields.inc({ body }, count);
  }

  /** The Prometheus text exposition: this app's metrics, the session gauges (one query) and the process's. */
  async render(): Promise<string> {
    this.websocketConnections.set(this.realtime.connectionCount);
    const parts = [await this.registry.metrics()];
    try {
      const live = await this.auth.countLiveSessions();
      this.liveServerSessions.set(live.servers);
      this.livePlayerSessions.set(live.players);
      parts.push(await this.sessionRegistry.metrics());
    } catch (error) {
      this.logger.warn(`Counting live sessions failed; the scrape goes without them: ${error instanceof Error ? error.message : String(error)}`);
    }
    parts.push(await this.process.metrics());
    return parts.join('\n');
  }
}
