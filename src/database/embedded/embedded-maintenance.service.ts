import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { DATABASE_TARGET, DatabaseTarget } from '../database-options';
import { EmbeddedMaintenanceRepository, MaintenanceTarget } from './embedded-maintenance.repository';

/** What one pass did: each table maintained, with how long its statement took. */
export interface MaintenancePass {
  done: Array<MaintenanceTarget & { ms: number }>;
  failed: string | null;
}

/**
 * Autovacuum's work for the embedded database (docs/decisions.md "Embedded database: upkeep"):
 * every EMBEDDED_MAINTENANCE_SECONDS the tables past autovacuum's thresholds are analyzed, and
 * vacuumed where they have dead rows, rows never vacuumed or old transaction ids, one statement
 * at a time (the one session serves every other statement in between). Nothing on PostgreSQL,
 * where autovacuum does it (docs/operations.md "PostgreSQL statistics").
 */
@Injectable()
export class EmbeddedMaintenance implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EmbeddedMaintenance');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<MaintenancePass> | null = null;
  private stopped = false;

  constructor(
    @Inject(DATABASE_TARGET) private readonly target: DatabaseTarget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly maintenance: EmbeddedMaintenanceRepository,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.target.embedded) return;
    this.timer = setInterval(() => void this.pass(), this.config.embeddedMaintenanceSeconds * 1_000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass (a pass already running is the one answered). */
  pass(): Promise<MaintenancePass> {
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  private async run(): Promise<MaintenancePass> {
    const done: MaintenancePass['done'] = [];
    try {
      for (const target of await this.maintenance.due()) {
        if (this.stopped) break;
        const started = Date.now();
        await this.maintenance.maintain(target);
        done.push({ ...target, ms: Date.now() - started });
        this.logger.debug(
          `${target.vacuum ? 'Vacuumed and analyzed' : 'Analyzed'} ${target.table} in ${Date.now() - started} ms`,
        );
      }
      return { done, failed: null };
    } catch (error) {
      // The database restarting or stopping: the next pass finds the same tables.
      // Stopping with a pass under way is expected, not a warning.
      const failed = error instanceof Error ? error.message : String(error);
      const line = `Embedded database upkeep stopped after ${done.length} table(s): ${failed}`;
      if (this.stopped) this.logger.debug(line);
      else this.logger.warn(line);
      return { done, failed };
    }
  }
}
