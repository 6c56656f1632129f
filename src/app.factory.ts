import { Logger, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { bodyParserErrorHandler, jsonBodyParser } from './common/http/body-parser';
import { HttpDrain } from './common/lifecycle/http-drain';
import { exitOnFatal, type StopSignals } from './common/lifecycle/shutdown-signals';
import { httpsOptionsOf } from './common/lifecycle/tls-options';
import { guardClientErrors } from './common/http/client-error';
import { createValidationPipe } from './common/pipes/validation.pipe';
import { AppConfig } from './config/app-config';
import { mountPublicHttp } from './public/public-http';
import { mountConsole } from './console/console-static';
import { mountSite } from './site/site-static';
import type { DatabaseTarget } from './database/database-options';
import { EmbeddedDatabase } from './database/embedded/embedded-database';
import { setupOpenApi } from './openapi/openapi';
import { createNestLogger, createRootLogger } from './observability/logging';
import { MetricsService } from './observability/metrics.service';
import { observeRequests } from './observability/request-observer';
import { RealtimeWsAdapter } from './realtime/realtime-ws.adapter';

/** A started service: the Nest app listening, plus the embedded database when there is one. */
export interface RunningService {
  app: NestExpressApplication;
  /** The port the HTTP(S) server is bound to (useful with PORT=0). */
  port: number;
  databaseUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where the JSON log lines go instead of stdout (the log tests read them). */
  logDestination?: DestinationStream;
  /**
   * The service cannot go on in this process (the embedded database could not be started again
   * within EMBEDDED_RECOVERY_SECONDS): a process exits non-zero here (exitOnFatal), so that its
   * orchestrator restarts it. Without it, the failure is only logged.
   */
  onFatal?: (error: Error) => void;
  /**
   * Aborted by a stop signal during start-up (StopSignals.startAborted): the step in progress ends
   * (the embedded database's start; connecting, migrating and building the modules; listening),
   * then what has started is closed and the start rejects with StartStoppedError.
   */
  stopSignal?: AbortSignal;
}

/** The start was stopped by a signal; everything it had started is closed. */
export class StartStoppedError extends Error {}

/** A thread that answers no ping this long after the start holds a statement for minutes: taken for a hang. */
const EMBEDDED_HANG_MS = 120_000;

/** The embedded database takes seconds to open: say so before, and when it is ready. */
async function startEmbedded(
  config: AppConfig,
  rootLogger: ReturnType<typeof createRootLogger>,
  onFatal: StartOptions['onFatal'],
): Promise<EmbeddedDatabase> {
  const log = rootLogger.child({ context: 'Database' });
  const started = Date.now();
  log.info(`Starting the embedded database in ${config.dataDir} (no DATABASE_URL)`);
  const embedded = await EmbeddedDatabase.start(config.dataDir, {
    recoveryMs: config.embeddedRecoverySeconds * 1_000,
    log: { info: (line) => log.info(line), warn: (line) => log.warn(line), error: (line) => log.error(line) },
    onFatal,
  });
  log.info(`Embedded database ready in ${Date.now() - started} ms`);
  return embedded;
}

/** Builds, configures and starts the service; the same path for `npm start` and the e2e tests. */
export async function startService(config: AppConfig, options: StartOptions = {}): Promise<RunningService> {
  const httpsOptions = httpsOptionsOf(config);
  const rootLogger = createRootLogger(config.logLevel, options.logDestination);
  const stopRequested = () => options.stopSignal?.aborted === true;
  if (stopRequested()) throw new StartStoppedError('Stopped before the start');
  const embedded = config.databaseUrl === null ? await startEmbedded(config, rootLogger, options.onFatal) : null;
  const database: DatabaseTarget = embedded
    ? { url: embedded.url, embedded: true, backup: () => embedded.backup() }
    : {
        url: config.databaseUrl as string,
        embedded: false,
        poolMode: config.databasePoolMode,
        migrationUrl: config.migrationDatabaseUrl ?? undefined,
        ...(config.databaseReadUrl
          ? {
              read: {
                url: config.databaseReadUrl,
                poolSize: config.databaseReadPoolSize,
                maxLagSeconds: config.databaseReadMaxLagSeconds,
              },
            }
          : {}),
      };
  let app: NestExpressApplication | null = null;
  let drain: HttpDrain;
  try {
    if (stopRequested()) throw new StartStoppedError('Stopped once the embedded database had started');
    app = await NestFactory.create<NestExpressApplication>(AppModule.register(config, database), {
      httpsOptions,
      bodyParser: false,
      logger: createNestLogger(rootLogger),
      abortOnError: false,
    });
    // Connected, migrated and every module built (a signal waits for this step: a migration is
    // not cut half-way, although each would roll back): close the pools and Redis again.
    if (stopRequested()) throw new StartStoppedError('Stopped once connected and migrated, before listening');
    app.disable('x-powered-by');
    // No weak ETag (a SHA-1 of every JSON answer) by default: the plugin sends no If-None-Match,
    // and the reads that profit from one (catalogs, manifest, files) set their own strong ETag.
    app.set('etag', false);
    // TRUST_PROXY: which X-Forwarded-For hops `clientIp` believes (limits, serverIP, request log, audit).
    app.set('trust proxy', config.trustProxy);
    app.use(observeRequests(app, rootLogger));
    // Before the body parser: its refusals under /public get the public API's CORS and no-store too.
    mountPublicHttp(app);
    app.use(jsonBodyParser(), bodyParserErrorHandler);
    guardClientErrors(app.getHttpServer());
    const metrics = app.get(MetricsService);
    const validationLogger = new Logger('Validation');
    app.useGlobalPipes(
      createValidationPipe((body, fields) => {
        metrics.countIgnoredFields(body, fields.length);
        validationLogger.debug(`${body}: ignored unknown fields ${fields.join(', ')}`);
      }),
    );
    app.useWebSocketAdapter(new RealtimeWsAdapter(app));
    setupOpenApi(app, config);
    mountConsole(app, config, new Logger('Console'));
    mountSite(app, config, new Logger('Site'));
    drain = new HttpDrain(app.getHttpServer());
    await app.listen(config.port, config.host);
    // Migrations are done: from now on no statement holds the embedded database for minutes.
    embedded?.watchForHangs(EMBEDDED_HANG_MS);
  } catch (error) {
    // What started, in reverse: the Nest app (pools, Redis, sockets), then the embedded database
    // (a clean shutdown that releases its data dir's lock). The start's own error is the one thrown.
    await app?.close().catch(() => undefined);
    await embedded?.stop();
    if (error instanceof StartStoppedError)
      rootLogger.child({ context: 'Main' }).info(`${error.message}: everything that had started is closed`);
    throw error;
  }
  const started = app;
  const port = (started.getHttpServer().address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  return {
    app: started,
    port,
    databaseUrl: database.url,
    close: () => {
      // Order: stop accepting and finish the requests in flight (their transactions commit), then
      // Nest's shutdown: WebSockets closed with 1001, then the database pool and Redis.
      closing ??= (async () => {
        try {
          await drain.drain(config.shutdownTimeoutSeconds * 1_000);
          await started.close();
        } finally {
          await embedded?.stop();
        }
      })();
      return closing;
    },
  };
}

/**
 * The start of a process (src/main.ts, and the test's service process): starts the service with
 * `signals` aborting the start, then hands the started service to them. Null when a signal
 * stopped the start; everything that had started is closed by then, and the process exits 0.
 */
export async function startUntilSignalled(
  config: AppConfig,
  signals: StopSignals,
  logger: LoggerService,
): Promise<RunningService | null> {
  // A signal that came while the modules loaded (a second or more) is handled here, before
  // anything opens: the process just exits.
  await new Promise((resolve) => setImmediate(resolve));
  signals.beginStart(logger);
  let started: RunningService | null = null;
  const fatal = exitOnFatal(() => started, logger);
  // A promise rejected with nothing to handle it (a library's own, as ioredis's resubscribe once
  // was) ends a Node process at once by default: requests cut, WebSockets dropped, the embedded
  // database not shut down. It ends here as a fatal failure does: stopped as far as it can be
  // within 10 s, then exit 1 for the orchestrator (docs/decisions.md "Signals at any time").
  process.on('unhandledRejection', (reason: unknown) =>
    fatal(
      new Error(
        `a promise was rejected and nothing handled it: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
      ),
    ),
  );
  try {
    started = await startService(config, {
      onFatal: fatal,
      stopSignal: signals.startAborted,
    });
  } catch (error) {
    if (error instanceof StartStoppedError) return null;
    throw error;
  }
  signals.serve(started);
  return started;
}
