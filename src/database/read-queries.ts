import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { databaseFailureOf } from '../common/errors/database-errors';
import { buildReadPoolConfig, type ConnectionWatch, type ReadReplicaTarget } from './database-options';
import { PreparedQueries, rowsOf } from './prepared-queries';
import { lsnBytes, ReplicaLag } from './replica-lag';

/** Where a read went. */
export type ReadTarget = 'replica' | 'primary';

/** What the metrics show of the read side. */
export interface ReadSideStats {
  /** Whether DATABASE_READ_URL is set. */
  configured: boolean;
  /** Whether reads go to the replica now. */
  replicaInUse: boolean;
  /** How far behind the replica may be, in seconds (since the start while it was never seen). */
  lagSeconds: number;
  reads: Record<ReadTarget, number>;
}

/** The standby's side of a check: is it one, and how far has it replayed. */
const REPLICA_CHECK_SQL = 'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed';

/** SQLSTATE 40001 on a standby: a query cancelled by a conflict with recovery (the primary vacuumed rows it read). */
const RECOVERY_CONFLICT = '40001';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The read side (docs/decisions.md "Read replica"): the statements of the reads that tolerate a
 * little lag (boards, period boards, rating history; the list is in the decisions) run here, on the
 * replica of DATABASE_READ_URL while it is reachable, a standby, and known to be at most
 * DATABASE_READ_MAX_LAG_SECONDS behind; on the primary otherwise (and always without a replica).
 * Repositories own the statements and choose, method by method, this or PreparedQueries (the
 * primary); nothing else decides where a read goes. A read the replica fails for want of a
 * connection, a resource or by a conflict with recovery runs again on the primary: reads are
 * idempotent.
 *
 * The lag is checked every quarter of the bound (250 ms to 1 s): the primary's WAL position, then
 * the replica's replayed position (ReplicaLag). Between checks the lag grows with the clock, so a
 * replica whose checks stop answering is left once the bound passes, without waiting for a timeout.
 */
export class ReadQueries implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ReadReplica');
  private readonly pool: Pool | null;
  private readonly lag = new ReplicaLag(Date.now());
  private readonly maxLagMs: number;
  /** The last check reached a standby. */
  private standby = false;
  /** Why the replica is not used (for the log line when reads switch). */
  private reason = 'not checked yet';
  /** Where the last log line said reads go (null: nothing said yet). */
  private announced: boolean | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private checkAgain = false;
  private stopped = false;
  private readonly waiters: Array<{ since: number; resolve: () => void }> = [];
  private readonly counts: Record<ReadTarget, number> = { replica: 0, primary: 0 };

  constructor(
    private readonly primary: PreparedQueries,
    private readonly dataSource: DataSource,
    target: ReadReplicaTarget | null,
    private readonly named: boolean,
    watch: ConnectionWatch = {},
  ) {
    this.maxLagMs = (target?.maxLagSeconds ?? 0) * 1_000;
    // The replica's refusals are not the primary's: readiness does not see them (no `refusals`).
    this.pool = target ? new Pool(buildReadPoolConfig(target, { counter: watch.counter })) : null;
    // An idle connection lost (the replica stopped): noted by the next check, never a crash.
    this.pool?.on('error', (error) => this.logger.debug(`A replica connection failed: ${error.message}`));
  }

  /** Runs a read statement where reads go now (see the class); `name` as PreparedQueries.run. */
  async run<T>(name: string, text: string, params: unknown[]): Promise<T[]> {
    if (this.pool === null || !this.replicaUsable(Date.now())) return this.onPrimary<T>(name, text, params);
    try {
      const rows = await rowsOf<T>(
        this.pool.query(this.named ? { name, text, values: params } : { text, values: params }),
        text,
        params,
      );
      this.counts.replica++;
      return rows;
    } catch (error) {
      const failure = databaseFailureOf(error);
      const code = (error as { driverError?: { code?: unknown } }).driverError?.code;
      if (failure === null && code !== RECOVERY_CONFLICT) throw error;
      if (failure === 'unreachable') this.leave(`the replica is unreachable (${messageOf(error)})`);
      return this.onPrimary<T>(name, text, params);
    }
  }

  /**
   * Resolves once a read through `run` sees everything committed on the primary before the call:
   * at once while reads go to the primary, else after a check that found the replica past the
   * primary's position of a moment after the call (at most the lag bound). For hints that tell
   * game servers to read again (live board updates): sent earlier, their read could miss the change.
   */
  caughtUp(): Promise<void> {
    if (this.pool === null || !this.replicaUsable(Date.now())) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { since: Date.now(), resolve };
      this.waiters.push(waiter);
      setTimeout(() => this.release((each) => each === waiter), this.maxLagMs).unref();
      this.checkSoon();
    });
  }

  stats(): ReadSideStats {
    const now = Date.now();
    return {
      configured: this.pool !== null,
      replicaInUse: this.pool !== null && this.replicaUsable(now),
      lagSeconds: this.lag.lagMs(now) / 1_000,
      reads: { ...this.counts },
    };
  }

  onApplicationBootstrap(): void {
    if (this.pool === null) return;
    const every = Math.min(1_000, Math.max(250, this.maxLagMs / 4));
    this.timer = setInterval(() => this.checkSoon(), every);
    this.timer.unref();
    this.checkSoon();
  }

  /**
   * Stops the checks and closes the replica's pool. A stop does not wait long for a replica that
   * hangs (a check or read stuck until its 15 s query timeout): at most a second, then the pool
   * ends in the background.
   */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.release(() => true);
    if (this.pool === null) return;
    const ended = this.pool.end().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, 1_000)))]);
    clearTimeout(timer);
  }

  private onPrimary<T>(name: string, text: string, params: unknown[]): Promise<T[]> {
    this.counts.primary++;
    return this.primary.run<T>(name, text, params);
  }

  private replicaUsable(now: number): boolean {
    return this.standby && this.lag.lagMs(now) <= this.maxLagMs;
  }

  /** A check now, or right after the one running (whose primary position may predate a waiter). */
  private checkSoon(): void {
    if (this.stopped) return;
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = this.check().finally(() => {
      this.checking = null;
      if (this.checkAgain) {
        this.checkAgain = false;
        this.checkSoon();
      }
    });
  }

  private async check(): Promise<void> {
    const pool = this.pool as Pool;
    const at = Date.now();
    try {
      const [{ lsn }] = await this.dataSource.query<Array<{ lsn: string }>>('SELECT pg_current_wal_lsn()::text AS lsn');
      this.lag.primaryAt(at, lsnBytes(lsn));
    } catch {
      // The primary does not answer: nothing to compare with; the replica's lag grows with the clock.
      this.settle();
      return;
    }
    try {
      const {
        rows: [row],
      } = await pool.query<{ standby: boolean; replayed: string | null }>(REPLICA_CHECK_SQL);
      if (!row.standby || row.replayed === null) {
        this.standby = false;
        this.reason =
          'DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false): a promoted replica is never read';
      } else {
        this.standby = true;
        this.lag.replayed(lsnBytes(row.replayed));
      }
    } catch (error) {
      this.standby = false;
      this.reason = `the replica is unreachable (${messageOf(error)})`;
    }
    this.settle();
  }

  private leave(reason: string): void {
    this.standby = false;
    this.reason = reason;
    this.settle();
  }

  /** Logs a switch of where reads go, and answers the waiters the replica now covers. */
  private settle(): void {
    if (this.stopped) return; // a check cut short by the stop says nothing about the replica
    const now = Date.now();
    const usable = this.replicaUsable(now);
    const seconds = (this.lag.lagMs(now) / 1_000).toFixed(1);
    if (usable !== this.announced) {
      if (usable)
        this.logger.log(
          `Reads go to the replica${this.announced === null ? '' : ' again'} (${seconds} s behind, at most ${this.maxLagMs / 1_000} s)`,
        );
      else
        this.logger.warn(
          `Reads go to the primary: ${
            this.standby
              ? `the replica is ${seconds} s behind, over DATABASE_READ_MAX_LAG_SECONDS=${this.maxLagMs / 1_000}`
              : this.reason
          }`,
        );
      this.announced = usable;
    }
    const fresh = this.lag.freshAt();
    this.release((waiter) => !usable || (fresh !== null && fresh >= waiter.since));
  }

  private release(which: (waiter: { since: number }) => boolean): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (!which(this.waiters[i])) continue;
      this.waiters[i].resolve();
      this.waiters.splice(i, 1);
    }
  }
}
