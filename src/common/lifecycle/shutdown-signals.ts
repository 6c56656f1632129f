import type { LoggerService } from '@nestjs/common';

/** What a signal stops: the started service (RunningService of app.factory) or anything that closes the same way. */
export interface Stoppable {
  close(): Promise<void>;
}

/**
 * SIGTERM/SIGINT stop the service gracefully (RunningService.close: HTTP drain, WebSockets 1001,
 * then database and Redis) and exit 0, or 1 when the stop failed. A second signal during the stop
 * exits at once with 130/143: the operator insists.
 */
export function stopOnSignals(service: Stoppable, logger: LoggerService): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} received again, exiting without waiting`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    stopping = true;
    logger.log(`${signal} received, shutting down`);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(`Shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** How long a failed process tries to stop what it can before it exits anyway. */
const FATAL_STOP_MS = 10_000;

/**
 * StartOptions.onFatal of a process (src/main.ts): the service cannot go on here, so it stops what
 * it can (bounded) and exits with 1 for its orchestrator to restart it, rather than answering 503
 * for good. `service` is null while the start has not finished.
 */
export function exitOnFatal(service: () => Stoppable | null, logger: LoggerService): (error: Error) => void {
  let exiting = false;
  return (error) => {
    if (exiting) return;
    exiting = true;
    logger.error(`Cannot go on: ${error.message}; exiting with status 1 so that the service is restarted`);
    const stopping = service()?.close() ?? Promise.resolve();
    const timeout = new Promise((resolve) => setTimeout(resolve, FATAL_STOP_MS).unref());
    void Promise.race([stopping.catch(() => undefined), timeout]).finally(() => process.exit(1));
  };
}
