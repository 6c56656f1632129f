import { Injectable, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { PreparedQueries } from './prepared-queries';
import { isDeadlock } from './pg-errors';

/**
 * A statement run once per request (a login, a sync) that can also run for many requests in one
 * round trip: a row per call, each call its own function call inside the one statement.
 */
// R types the answer only (a row of the single statement), for run()'s callers.
export interface BatchableStatement<C, _R> {
  /** The prepared statements' names: `name` for one call, `${name}_batch` for many. */
  readonly name: string;
  /** One call: its text (the answer is its first row) and parameters. */
  readonly single: string;
  params(call: C): unknown[];
  /**
   * Many calls: a row per call carrying `i`, the call's 1-based position in the arrays. `$n` is
   * the array of every call's n-th parameter of `params`; a parameter that is itself an array
   * comes as its JSON text (PostgreSQL arrays cannot be ragged), for the statement to unpack.
   */
  readonly batch: string;
  /** The order the calls of one batch run in (the order their rows are locked in); arrival order when absent. */
  readonly order?: (a: C, b: C) => number;
}

/** Batches of one statement in flight at once; calls arriving meanwhile wait and go together. */
export const BATCHES_IN_FLIGHT = 2;
/** Calls in one batch at most: they share a transaction, so its row locks are held until the last one ends. */
export const MAX_BATCH_CALLS = 32;

interface Waiting<C, R> {
  call: C;
  resolve: (row: R) => void;
  reject: (error: unknown) => void;
}

interface Lane<C, R> {
  waiting: Waiting<C, R>[];
  inFlight: number;
  scheduled: boolean;
}

/** SQLSTATEs of a lost or refused connection (08, 53, 57P): the database is unavailable, not one call wrong. */
const UNAVAILABLE = /^(?:08|53|57P)/;

/**
 * Group commit for the hot statements: login, collection and balance syncs, resume_session's
 * renewal, upload (docs/decisions.md "Logins, syncs and uploads batched under load"). Each statement has a lane; a call waits for the next turn of the event loop and
 * then goes in one statement with every call of that statement that arrived meanwhile, while at
 * most BATCHES_IN_FLIGHT batches of it are in flight. Alone, a call runs as its own statement
 * (nothing changes at low load); under load, many calls share one round trip, one parse-bind-
 * execute and one commit (measured: a tenth of the CPU per call, service and PostgreSQL).
 *
 * What a caller gets is what its own statement would have answered:
 *   - each call is its own function call, with its own snapshots, run one after the other in
 *     `order` (a later call of a batch sees the writes of an earlier one, as it would have seen
 *     them committed); the transaction's clock (`now()`) is the batch's start;
 *   - if the batch's statement fails with a database error (a call's own error, a deadlock
 *     between batches, a serialization failure), its transaction is rolled back, nothing is
 *     written, and every call runs again alone, to get its own answer or error (a call alone that
 *     PostgreSQL cancels to break a deadlock runs once more: it was rolled back whole);
 *   - a lost connection fails every call of the batch with the same error (the database is
 *     unavailable to each of them), and so does node-postgres' query timeout (15 s: the outcome
 *     of every call is then unknown, as it would be for one call alone). The batched functions
 *     wait at most 5 s for a row lock (their `lock_timeout`), so a held row fails the batch with
 *     55P03 well before, and only the call that waits for it fails, alone.
 * The cost: the calls of a batch commit together, so a call waits for the others of its batch,
 * and a call that waits for a row lock holds up the batch (up to that lock_timeout).
 */
@Injectable()
export class StatementBatcher {
  private readonly logger = new Logger(StatementBatcher.name);
  private readonly lanes = new Map<string, Lane<unknown, unknown>>();
  private batchedCalls = 0;
  private fallbacks = 0;

  constructor(private readonly prepared: PreparedQueries) {}

  run<C, R>(statement: BatchableStatement<C, R>, call: C): Promise<R> {
    const lane = this.laneOf(statement);
    return new Promise<R>((resolve, reject) => {
      lane.waiting.push({ call, resolve, reject });
      this.schedule(statement, lane);
    });
  }

  /** Calls answered in a batch of two or more, and batches run again call by call. */
  stats(): { batchedCalls: number; fallbacks: number } {
    return { batchedCalls: this.batchedCalls, fallbacks: this.fallbacks };
  }

  private laneOf<C, R>(statement: BatchableStatement<C, R>): Lane<C, R> {
    let lane = this.lanes.get(statement.name) as Lane<C, R> | undefined;
    if (!lane) {
      lane = { waiting: [], inFlight: 0, scheduled: false };
      this.lanes.set(statement.name, lane as Lane<unknown, unknown>);
    }
    return lane;
  }

  private schedule<C, R>(statement: BatchableStatement<C, R>, lane: Lane<C, R>): void {
    if (lane.scheduled || lane.inFlight >= BATCHES_IN_FLIGHT || lane.waiting.length === 0) return;
    lane.scheduled = true;
    setImmediate(() => {
      lane.scheduled = false;
      while (lane.waiting.length > 0 && lane.inFlight < BATCHES_IN_FLIGHT) {
        const group = lane.waiting.splice(0, MAX_BATCH_CALLS);
        lane.inFlight++;
        void this.execute(statement, group)
          // A failure of the batcher's own (never the database's: execute settles those) fails the group, not the process.
          .catch((error: unknown) => group.forEach((waiting) => waiting.reject(error)))
          .finally(() => {
            lane.inFlight--;
            this.schedule(statement, lane);
          });
      }
    });
  }

  private async execute<C, R>(statement: BatchableStatement<C, R>, group: Waiting<C, R>[]): Promise<void> {
    if (group.length === 1) {
      await this.runAlone(statement, group[0]);
      return;
    }
    const ordered = statement.order ? [...group].sort((a, b) => statement.order!(a.call, b.call)) : group;
    let rows: Array<R & { i: number | string }>;
    try {
      rows = await this.prepared.run<R & { i: number | string }>(
        `${statement.name}_batch`,
        statement.batch,
        batchParamsOf(
          statement,
          ordered.map((waiting) => waiting.call),
        ),
      );
    } catch (error) {
      if (!isCallError(error)) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      this.fallbacks++;
      this.logger.debug(
        `${statement.name}: a batch of ${group.length} failed (${String(error)}); each call again alone`,
      );
      await Promise.all(group.map((waiting) => this.runAlone(statement, waiting)));
      return;
    }
    const answered = new Set<number>();
    for (const row of rows) {
      const position = Number(row.i) - 1;
      const waiting = ordered[position];
      if (!waiting || answered.has(position)) continue;
      answered.add(position);
      const { i: _position, ...answer } = row;
      waiting.resolve(answer as R);
    }
    this.batchedCalls += answered.size;
    ordered.forEach((waiting, position) => {
      if (!answered.has(position)) waiting.reject(new Error(`${statement.name}: no answer for a call of a batch`));
    });
  }

  /**
   * One call as its own statement. A call PostgreSQL cancelled to break a deadlock (rolled back
   * whole, nothing written) runs once more before its caller hears of it: the calls of a failed
   * batch run again alone at the same time, and two of one player's can meet in opposite orders.
   */
  private async runAlone<C, R>(
    statement: BatchableStatement<C, R>,
    waiting: Waiting<C, R>,
    again = false,
  ): Promise<void> {
    try {
      const rows = await this.prepared.run<R>(statement.name, statement.single, statement.params(waiting.call));
      waiting.resolve(rows[0]);
    } catch (error) {
      if (!again && isDeadlock(error)) {
        this.logger.debug(`${statement.name}: a call was cancelled to break a deadlock; once more`);
        await this.runAlone(statement, waiting, true);
        return;
      }
      waiting.reject(error);
    }
  }
}

/** One array per parameter of the single statement, a call per element; an array-valued parameter as JSON text. */
function batchParamsOf<C, R>(statement: BatchableStatement<C, R>, calls: readonly C[]): unknown[] {
  const rows = calls.map((call) => statement.params(call));
  return rows[0].map((_value, column) =>
    rows.map((row) => (Array.isArray(row[column]) ? JSON.stringify(row[column]) : row[column])),
  );
}

/** A database error about the statement (one call's or the batch's own), not a lost connection. */
function isCallError(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: unknown }).code;
  return typeof code === 'string' && code.length === 5 && !UNAVAILABLE.test(code);
}

/** Orders uids (digit strings, no leading zeros) numerically: the lock order of batched calls. */
export function compareUids(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
