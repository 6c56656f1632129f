import type { LoggerService } from '@nestjs/common';

/** What a signal stops: the started service (RunningService of app.factory) or anything that closes the same way. */
export interface Stoppable {
  close(): Promise<void>;
}

/** Where the signal lines go until the process has its logger (the first lines are stderr). */
type SignalLog = Pick<LoggerService, 'log' | 'warn' | 'error'>;

const STDERR_LOG: SignalLog = {
  log: (message: string) => process.stderr.write(`${message}\n`),
  warn: (message: string) => process.stderr.write(`${message}\n`),
  error: (message: string) => process.stderr.write(`${message}\n`),
};

/** The exit status of a stop the operator forced with a second signal (128 + the signal's number). */
const forcedExit = (signal: NodeJS.Signals): number => (signal === 'SIGINT' ? 130 : 143);

/**
 * SIGTERM and SIGINT, caught from the first moment of the process (docs/decisions.md "Signals at
 * any time"): src/main.ts creates this before it loads anything else, so a signal during start-up
 * is never the default action (an exit with 143 that leaves what started half open).
 *
 * - While the modules load and the configuration is read, nothing is open: the first signal exits 0 at once.
 * - During start-up, the first signal aborts `startAborted`: startService ends the step it is in,
 *   closes what has started (pools, Redis, the embedded database with a clean shutdown, which
 *   releases its data dir's lock) and the process exits 0.
 * - Once the service runs (`serve`), the first signal stops it gracefully (RunningService.close:
 *   HTTP drain, WebSockets 1001, then database and Redis) and exits 0, or 1 when the stop failed.
 * - A second signal, at any moment, exits at once with 130/143: the operator insists. The
 *   embedded database is then left as after a crash (recovered from its WAL at the next start).
 */
export class StopSignals {
  private readonly controller = new AbortController();
  private received: NodeJS.Signals | null = null;
  /** Set when the start begins: before, nothing is open and a signal exits at once. */
  private starting = false;
  private service: Stoppable | null = null;
  private readonly onSignal = (signal: NodeJS.Signals) => this.handle(signal);

  constructor(
    private readonly exit: (code: number) => void = (code) => process.exit(code),
    /** Until the start hands over the process's logger. */
    private logger: SignalLog = STDERR_LOG,
  ) {}

  /** Catches SIGTERM and SIGINT from now on. */
  install(): this {
    process.on('SIGTERM', this.onSignal);
    process.on('SIGINT', this.onSignal);
    return this;
  }

  /** Stops catching them (the process's own instance never does; a unit test's does). */
  uninstall(): void {
    process.off('SIGTERM', this.onSignal);
    process.off('SIGINT', this.onSignal);
  }

  /** Aborted by the first signal that arrives before `serve` (StartOptions.stopSignal). */
  get startAborted(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal received so far, if any. */
  get signal(): NodeJS.Signals | null {
    return this.received;
  }

  /** The start begins (src/app.factory.ts startUntilSignalled): from now on a signal closes what has started. */
  beginStart(logger: SignalLog): void {
    this.logger = logger;
    this.starting = true;
  }

  /** The service has started: a signal stops it from now on (at once when one came during the start). */
  serve(service: Stoppable): void {
    this.service = service;
    if (this.received !== null) this.stop(this.received);
  }

  private handle(signal: NodeJS.Signals): void {
    if (this.received !== null) {
      this.logger.warn(`${signal} received again, exiting without waiting`);
      this.exit(forcedExit(signal));
      return;
    }
    this.received = signal;
    if (this.service !== null) {
      this.stop(signal);
      return;
    }
    if (!this.starting) {
      this.logger.log(`${signal} received during start-up, before anything was opened: exiting`);
      this.exit(0);
      return;
    }
    this.logger.log(
      `${signal} received during start-up: stopping once the current step ends and what has started is closed (a second signal exits at once)`,
    );
    this.controller.abort(signal);
  }

  private stop(signal: NodeJS.Signals): void {
    this.logger.log(`${signal} received, shutting down`);
    (this.service as Stoppable).close().then(
      () => this.exit(0),
      (error: unknown) => {
        this.logger.error(
          `Shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        this.exit(1);
      },
    );
  }
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
