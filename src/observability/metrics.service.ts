import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, type Type } from '@nestjs/common';
import { DiscoveryService, HttpAdapterHost } from '@nestjs/core';
import type Redis from 'ioredis';
import type { Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { SessionReadService } from '../auth/session-read.service';
import { errorCodeOf } from '../common/filters/all-exceptions.filter';
import { PLAYER_LOGIN_MODES } from '../player/dto/player-login.dto';
import { PlayerLoginService } from '../player/player-login.service';
import { LeaderboardService } from '../ranking';
import { ConnectionRegistry } from '../realtime/connection-registry';
import { PURGE_OUTCOMES, RetentionService } from '../retention/retention.service';
import { UploadStatsService } from '../upload/upload-stats.service';
import { WebhookDispatcher } from '../webhooks/webhook-dispatcher.service';
import { WebhookService } from '../webhooks/webhook.service';
import { REDIS } from '../common/redis/redis.module';
import type { RouteMetric } from '../common/decorators/route-metric.decorator';
import { buildInfo } from '../config/build-info';
import { QueryCounter } from '../database/query-counter';
import { ReadQueries, type ReadTarget } from '../database/read-queries';
import { StatementBatcher } from '../database/statement-batcher';
import { processMetrics, sampleEventLoop } from './process-metrics';
import { expressRoutes, routeKey, routeMetricsOf } from './route-metrics';

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
export class MetricsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Metrics');
  /** `METHOD /pattern` → what the route counts, from the handlers' `@CountAs(…)` (set once the routes exist). */
  private routeMetrics = new Map<string, RouteMetric>();
  private readonly registry = new Registry();
  /** Gauges read from the database: left out of a scrape when the database does not answer. */
  private readonly sessionRegistry = new Registry();
  private readonly webhookRegistry = new Registry();

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

  private readonly uploadPhases = new Histogram({
    name: 'rhythmc_upload_phase_seconds',
    help: "Where the time of an upload answered 200 went in the service, by phase: store (from taking it to its commit: waiting for a batch, or in process for the same player's previous upload or an index reload; the statement; the commit) and rank (the rank answer after the commit: the in-process index or the round trip to Redis, a reload of the banned players after a ban changed, or the SQL rank count while the index cannot answer).",
    labelNames: ['phase'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  private readonly flaggedPlays = new Counter({
    name: 'rhythmc_plays_flagged_total',
    help: 'Uploaded plays that failed a score consistency check, by check (a play failing two counts under both); stored, counted only once approved.',
    labelNames: ['check'] as const,
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

  private readonly build = new Gauge({
    name: 'rhythmc_build_info',
    help: 'Always 1; the labels say what runs: package version, git commit of the build, Node.js version.',
    labelNames: ['version', 'commit', 'node'] as const,
    registers: [this.registry],
  });

  private readonly databasePool = new Gauge({
    name: 'rhythmc_db_pool_connections',
    help: 'The database connection pool of this instance: connections open (total), idle, and queries waiting for one (waiting).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  /** Only with REDIS_URL: an unlabelled gauge would read 0 ("down") where there is no Redis at all. */
  private readonly redisUp: Gauge | null;

  private readonly rankIndex = new Gauge({
    name: 'rhythmc_rank_index_ready',
    help: 'Whether the rank index answers ranks (1) or ranks come from SQL (0: building, lost, Redis down), by mode (memory or redis).',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });

  private readonly rankIndexEntries = new Gauge({
    name: 'rhythmc_rank_index_entries',
    help: 'Entries of the rank index: players in the site ranking (site), per-chart entries over all charts (charts; in-process index only).',
    labelNames: ['mode', 'ranking'] as const,
    registers: [this.registry],
  });

  private readonly rankIndexMismatches = new Counter({
    name: 'rhythmc_rank_index_mismatches_total',
    help: 'Times this instance found the Redis rank index not bound to this database, by reason: unbound, other_database, database_behind (a restore), redis_restarted (each rebuilt from the tables), conflict (another deployment on the same REDIS_KEY_PREFIX: this instance answers ranks from SQL until restarted).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly sqlRankCounts = new Counter({
    name: 'rhythmc_rank_sql_counts_total',
    help: 'SQL rank counts run because the rank index could not answer (counted, failed ones included), and requests answered 503 because this instance was already counting as many as it may (refused).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly boardWindowCounts = new Counter({
    name: 'rhythmc_board_window_counts_total',
    help: "Board windows whose rank is a SQL count (a live period's, a group's or a country's; failed ones included), and requests answered 503 because this instance was already counting as many as it may (refused).",
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly webhookAttempts = new Counter({
    name: 'rhythmc_webhook_attempts_total',
    help: 'Webhook delivery attempts this instance made, by result: delivered (2xx), http_error (another status), redirect (a 3xx, not followed), timeout (WEBHOOK_TIMEOUT_SECONDS), connection (refused, reset, DNS), refused (an address the service does not call).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: 'rhythmc_webhook_deliveries_total',
    help: 'Webhook deliveries this instance finished, by outcome: delivered, or given_up (still failing WEBHOOK_RETRY_FOR_SECONDS after the event; state failed in the log).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly webhookDisables = new Counter({
    name: 'rhythmc_webhook_disables_total',
    help: 'Webhooks this instance turned off because every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS (an audit row webhook.disable each).',
    registers: [this.registry],
  });

  private readonly webhookInFlight = new Gauge({
    name: 'rhythmc_webhook_attempts_in_flight',
    help: "Webhook delivery attempts this instance has in flight now, by webhook id (webhooks with none are not listed). One at WEBHOOK_CONCURRENCY_PER_WEBHOOK for minutes is a receiver that answers slowly or not at all: it holds its share of this instance's slots (another webhook's deliveries are not held up).",
    labelNames: ['webhook'] as const,
    registers: [this.registry],
  });

  private readonly webhookDeliveryLag = new Histogram({
    name: 'rhythmc_webhook_delivery_seconds',
    help: "Time from an event's transaction to its delivery's 2xx, for deliveries this instance made (retries included: a receiver that was down adds its outage).",
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1_800, 3_600, 21_600, 86_400],
    registers: [this.registry],
  });

  private readonly webhookOutbox = new Gauge({
    name: 'rhythmc_webhook_outbox_deliveries',
    help: 'Deliveries not yet sent (the whole deployment), by state: pending (of webhooks that are on), due (of those, whose attempt is due now: a steady number means the instances fall behind), waiting (of webhooks that are off: sent when turned on again).',
    labelNames: ['state'] as const,
    registers: [this.webhookRegistry],
  });

  private readonly webhookOutboxAge = new Gauge({
    name: 'rhythmc_webhook_outbox_oldest_seconds',
    help: "Pending deliveries of webhooks that are on (the whole deployment), by measure: pending (the age of the oldest one's event: a receiver failing keeps it growing) and due (how late the most overdue attempt is: the instances fall behind); 0 without any.",
    labelNames: ['measure'] as const,
    registers: [this.webhookRegistry],
  });

  private readonly webhookStates = new Gauge({
    name: 'rhythmc_webhooks',
    help: 'Registered webhooks (the whole deployment), by state: enabled, paused (turned off by staff), disabled (turned off by the service after failing too long).',
    labelNames: ['state'] as const,
    registers: [this.webhookRegistry],
  });

  /** Node's process metrics, shared by the apps of the process; created at start so CPU counts from then. */
  private readonly retentionDeleted = new Counter({
    name: 'rhythmc_retention_deleted_rows_total',
    help: 'Rows deleted by retention purges on this instance, by table (docs/operations.md "Retention").',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  private readonly retentionRuns = new Counter({
    name: 'rhythmc_retention_runs_total',
    help: 'Retention purge runs of this instance by table and outcome (ok, error, stopped, skipped: another run held the table).',
    labelNames: ['table', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly retentionLastRun = new Gauge({
    name: 'rhythmc_retention_last_run_timestamp_seconds',
    help: 'When this instance last finished a retention run of the table (Unix seconds).',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  private readonly process = processMetrics();

  /** The event-loop delay is sampled while this app runs (stopped in onModuleDestroy). */
  private readonly stopEventLoopSampling = sampleEventLoop();

  constructor(
    private readonly sessions: SessionReadService,
    private readonly connections: ConnectionRegistry,
    private readonly retention: RetentionService,
    private readonly uploadStats: UploadStatsService,
    private readonly boards: LeaderboardService,
    private readonly dataSource: DataSource,
    private readonly webhooks: WebhookService,
    private readonly dispatcher: WebhookDispatcher,
    @Inject(REDIS) private readonly redis: Redis | null,
    private readonly discovery: DiscoveryService,
    private readonly adapterHost: HttpAdapterHost,
    queryCounter: QueryCounter,
    batcher: StatementBatcher,
    players: PlayerLoginService,
    reads: ReadQueries,
  ) {
    if (reads.stats().configured) this.observeReadSide(reads);
    let counted = 0;
    // Read at scrape time, like the gauges: the count lives with the pool's clients (src/database).
    new Counter({
      name: 'rhythmc_db_queries_total',
      help: 'Statements this instance sent to the database (round trips, BEGIN and COMMIT included).',
      registers: [this.registry],
      collect() {
        this.inc(queryCounter.queries - counted);
        counted = queryCounter.queries;
      },
    });
    const batchedSeen = { calls: 0, fallbacks: 0 };
    new Counter({
      name: 'rhythmc_db_batched_calls_total',
      help: 'Logins, state syncs, session renewals and uploads answered by a statement they shared with others (StatementBatcher; a call alone is not counted).',
      registers: [this.registry],
      collect() {
        const { batchedCalls } = batcher.stats();
        this.inc(batchedCalls - batchedSeen.calls);
        batchedSeen.calls = batchedCalls;
      },
    });
    new Counter({
      name: 'rhythmc_db_batch_fallbacks_total',
      help: 'Batched statements that failed with a database error (a deadlock, one call wrong) and whose calls ran again one by one.',
      registers: [this.registry],
      collect() {
        const { fallbacks } = batcher.stats();
        this.inc(fallbacks - batchedSeen.fallbacks);
        batchedSeen.fallbacks = fallbacks;
      },
    });
    const takeoversSeen: Record<string, number> = {};
    new Counter({
      name: 'rhythmc_player_session_takeovers_total',
      help: 'Player sessions opened without proof (ONLINE) that a login with proof through another server took over, by proof (TOKEN: a Net Token, OFFLINE_REFRESH: a resume token issued to a proven session). A steady rate: some server logs players in that it does not have (the admin server list names it).',
      labelNames: ['proof'] as const,
      registers: [this.registry],
      collect() {
        for (const [proof, count] of Object.entries(players.takeovers())) {
          this.inc({ proof }, count - (takeoversSeen[proof] ?? 0));
          takeoversSeen[proof] = count;
        }
      },
    });
    this.redisUp =
      redis === null
        ? null
        : new Gauge({
            name: 'rhythmc_redis_up',
            help: 'Whether this instance is connected to Redis (1) or not (0: events stay local, limits in memory, ranks from SQL). Absent without REDIS_URL.',
            registers: [this.registry],
          });
    dispatcher.observeDeliveredWith((seconds) => this.webhookDeliveryLag.observe(seconds));
    uploadStats.observePhasesWith((phase, seconds) => this.uploadPhases.observe({ phase }, seconds));
    const info = buildInfo();
    this.build.set({ version: info.version, commit: info.commit, node: info.node }, 1);
  }

  /** Nest has registered every route by now (init registers the router before this hook). */
  onApplicationBootstrap(): void {
    const controllers = this.discovery
      .getControllers()
      .flatMap((wrapper) => (wrapper.metatype ? [wrapper.metatype as Type] : []));
    const router = this.adapterHost.httpAdapter.getInstance<{ router: Parameters<typeof expressRoutes>[0] }>().router;
    this.routeMetrics = routeMetricsOf(controllers, expressRoutes(router));
  }

  onModuleDestroy(): void {
    this.stopEventLoopSampling();
  }

  /** Records one answered request; called when its response closes. Scrapes are not counted. */
  observeRequest(request: Request, response: Response, route: string, seconds: number): void {
    // Express answers HEAD with the GET route.
    const metric = this.routeMetrics.get(routeKey(request.method === 'HEAD' ? 'GET' : request.method, route));
    if (metric === 'scrape') return;
    const labels = {
      method: request.method,
      route,
      status: response.writableFinished ? String(response.statusCode) : 'aborted',
    };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
    if (metric === 'server-login') this.logins.inc({ kind: 'server', mode: '-', result: resultOf(response) });
    else if (metric === 'player-login')
      this.logins.inc({ kind: 'player', mode: loginModeOf(request.body), result: resultOf(response) });
    else if (metric === 'upload') this.uploads.inc({ result: resultOf(response) });
  }

  /** Unknown fields of a plugin body that validation stripped. */
  countIgnoredFields(body: string, count: number): void {
    this.ignoredFields.inc({ body }, count);
  }

  /** The dispatcher's counts since start; reset + inc keeps each a counter within the process. */
  private observeWebhookCounts(): void {
    const counts = this.dispatcher.counts;
    this.webhookAttempts.reset();
    for (const [result, count] of counts.attempts) this.webhookAttempts.inc({ result }, count);
    this.webhookDeliveries.reset();
    this.webhookDeliveries.inc({ outcome: 'delivered' }, counts.delivered);
    this.webhookDeliveries.inc({ outcome: 'given_up' }, counts.givenUp);
    this.webhookDisables.reset();
    this.webhookDisables.inc(counts.disabled);
    this.webhookInFlight.reset();
    for (const [webhook, attempts] of counts.inFlight) this.webhookInFlight.set({ webhook: String(webhook) }, attempts);
  }

  /** node-postgres's pool behind TypeORM (the embedded database's too): open, idle, waiting. */
  private observePool(): void {
    const pool = (this.dataSource.driver as PostgresDriver).master as
      { totalCount?: number; idleCount?: number; waitingCount?: number } | undefined;
    if (pool?.totalCount === undefined) return;
    this.databasePool.set({ state: 'total' }, pool.totalCount);
    this.databasePool.set({ state: 'idle' }, pool.idleCount ?? 0);
    this.databasePool.set({ state: 'waiting' }, pool.waitingCount ?? 0);
  }

  /** Only with DATABASE_READ_URL: the replica's lag, whether it is read, and the reads by target. */
  private observeReadSide(reads: ReadQueries): void {
    new Gauge({
      name: 'rhythmc_db_read_replica_lag_seconds',
      help: 'How far behind the primary the read replica (DATABASE_READ_URL) may be: time since the newest primary WAL position it is known to have replayed (since the start while never seen). Reads leave it above DATABASE_READ_MAX_LAG_SECONDS.',
      registers: [this.registry],
      collect() {
        this.set(reads.stats().lagSeconds);
      },
    });
    new Gauge({
      name: 'rhythmc_db_read_replica_in_use',
      help: 'Whether the reads that tolerate lag go to the read replica (1) or to the primary (0: the replica unreachable, not a standby or too far behind).',
      registers: [this.registry],
      collect() {
        this.set(reads.stats().replicaInUse ? 1 : 0);
      },
    });
    const seen: Record<ReadTarget, number> = { replica: 0, primary: 0 };
    new Counter({
      name: 'rhythmc_db_lagged_reads_total',
      help: 'Statements of the reads that tolerate lag (boards, period boards, rating history, public player lookups), by where they ran: replica or primary.',
      labelNames: ['target'] as const,
      registers: [this.registry],
      collect() {
        const counts = reads.stats().reads;
        for (const target of ['replica', 'primary'] as const) {
          this.inc({ target }, counts[target] - seen[target]);
          seen[target] = counts[target];
        }
      },
    });
  }

  /** Retention's counts since start (reset + inc keeps them counters within the process). */
  private observeRetention(): void {
    this.retentionDeleted.reset();
    this.retentionRuns.reset();
    this.retentionLastRun.reset();
    for (const [table, stats] of this.retention.purgeStats()) {
      this.retentionDeleted.inc({ table }, stats.deleted);
      for (const outcome of PURGE_OUTCOMES) this.retentionRuns.inc({ table, outcome }, stats.runs[outcome]);
      if (stats.lastFinishedAt !== null) this.retentionLastRun.set({ table }, stats.lastFinishedAt / 1000);
    }
  }

  /** The Prometheus text exposition: this app's metrics, the session gauges (one query) and the process's. */
  async render(): Promise<string> {
    this.websocketConnections.set(this.connections.connectionCount);
    this.observePool();
    if (this.redis !== null) this.redisUp?.set(this.redis.status === 'ready' ? 1 : 0);
    try {
      const index = await this.uploadStats.rankIndexStats();
      this.rankIndex.reset();
      this.rankIndexEntries.reset();
      this.rankIndex.set({ mode: index.mode }, index.ready ? 1 : 0);
      if (index.rankedPlayers !== null)
        this.rankIndexEntries.set({ mode: index.mode, ranking: 'site' }, index.rankedPlayers);
      if (index.chartEntries !== null)
        this.rankIndexEntries.set({ mode: index.mode, ranking: 'charts' }, index.chartEntries);
    } catch (error) {
      this.logger.warn(
        `Reading the rank index failed; the scrape goes without its size: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // The upload's stats count; the counter shows its totals (reset + inc keeps it a counter within the process).
    this.flaggedPlays.reset();
    for (const [check, count] of this.uploadStats.flaggedCounts()) this.flaggedPlays.inc({ check }, count);
    this.rankIndexMismatches.reset();
    for (const [reason, count] of this.uploadStats.rankIndexMismatches())
      this.rankIndexMismatches.inc({ reason }, count);
    const sqlCounts = this.uploadStats.sqlRankCounts();
    this.sqlRankCounts.reset();
    this.sqlRankCounts.inc({ result: 'counted' }, sqlCounts.counted);
    this.sqlRankCounts.inc({ result: 'refused' }, sqlCounts.refused);
    const windowCounts = this.boards.windowCountTotals();
    this.boardWindowCounts.reset();
    this.boardWindowCounts.inc({ result: 'counted' }, windowCounts.counted);
    this.boardWindowCounts.inc({ result: 'refused' }, windowCounts.refused);
    this.observeRetention();
    // The delivery thread's counts since its last report (it reports every 250 ms otherwise).
    await this.dispatcher.collectCounts();
    this.observeWebhookCounts();
    const parts = [await this.registry.metrics()];
    try {
      const live = await this.sessions.countLiveSessions();
      this.liveServerSessions.set(live.servers);
      this.livePlayerSessions.set(live.players);
      parts.push(await this.sessionRegistry.metrics());
    } catch (error) {
      this.logger.warn(
        `Counting live sessions failed; the scrape goes without them: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    try {
      const outbox = await this.webhooks.outboxStats();
      for (const state of ['pending', 'due', 'waiting'] as const) this.webhookOutbox.set({ state }, outbox[state]);
      this.webhookOutboxAge.set({ measure: 'pending' }, outbox.oldestPendingSeconds);
      this.webhookOutboxAge.set({ measure: 'due' }, outbox.oldestDueSeconds);
      for (const state of ['enabled', 'paused', 'disabled'] as const) this.webhookStates.set({ state }, outbox[state]);
      parts.push(await this.webhookRegistry.metrics());
    } catch (error) {
      this.logger.warn(
        `Reading the webhook outbox failed; the scrape goes without it: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    parts.push(await this.process.metrics());
    return parts.join('\n');
  }
}
