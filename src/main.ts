import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { startService } from './app.factory';
import { stopOnSignals } from './common/lifecycle/shutdown-signals';
import { ConfigError, loadConfig } from './config/app-config';

async function main(): Promise<void> {
  const logger = new Logger('Main');
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  const service = await startService(config);
  logger.log(
    `rhythmc-backend listening on ${config.host}:${service.port} (${config.databaseUrl ? 'PostgreSQL' : `embedded database in ${config.dataDir}`}${config.redisUrl ? ', Redis' : ''})`,
  );

  stopOnSignals(service, logger);
}

main().catch((error: unknown) => {
  process.stderr.write(`rhythmc-backend failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
