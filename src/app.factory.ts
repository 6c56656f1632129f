import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { bodyParserErrorHandler, jsonBodyParser } from './common/http/body-parser';
import { createValidationPipe } from './common/pipes/validation.pipe';
import { AppConfig } from './config/app-config';
import type { DatabaseTarget } from './database/database-options';
import { EmbeddedDatabase } from './database/embedded/embedded-database';
import { createNestLogger, createRootLogger } from './observability/logging';
import { observeRequests } from './observability/request-observer';
import { RealtimeWsAdapter } from './realtime/realtime-ws.adapter';

/** A started service: the Nest app listening, plus the embedded database when there is one. */
export interface RunningService {
  app: NestExpressApplication;
  /** The address the HTTP server is bound to (useful with PORT=0). */
  port: number;
  databaseUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where the JSON log lines go instead of stdout (the log tests read them). */
  logDestination?: DestinationStream;
}

/** Builds, configures and starts the service; the same path for `npm start` and the e2e tests. */
export async function startService(config: AppConfig, options: StartOptions = {}): Promise<RunningService> {
  const rootLogger = createRootLogger(config.logLevel, options.logDestination);
  const embedded = config.databaseUrl === null ? await EmbeddedDatabase.start(config.dataDir) : null;
  const database: DatabaseTarget = embedded ? { url: embedded.url, embedded: true } : { url: config.databaseUrl as string, embedded: false };
  let app: NestExpressApplication;
  try {
    app = await NestFactory.create<NestExpressApplication>(AppModule.register(config, database), {
      bodyParser: false,
      logger: createNestLogger(rootLogger),
      abortOnError: false,
    });
    app.disable('x-powered-by');
    app.use(observeRequests(app, rootLogger));
    app.use(jsonBodyParser(), bodyParserErrorHandler);
    app.useGlobalPipes(createValidationPipe());
    app.useWebSocketAdapter(new RealtimeWsAdapter(app));
    await app.listen(config.port, config.host);
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  const port = (app.getHttpServer().address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  return {
    app,
    port,
    databaseUrl: database.url,
    close: () => {
      closing ??= (async () => {
        try {
          await app.close();
        } finally {
          await embedded?.stop();
        }
      })();
      return closing;
    },
  };
}
