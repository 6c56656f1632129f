import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isLockNotAvailable } from '../database/pg-errors';
import { SNAPSHOT_LOCK_KEY } from '../upload/history/rating-history.repository';
import { PLAYER_DATA, PlayerDataEntry } from './player-data.map';

/**
 * Runs PLAYER_DATA (player-data.map.ts): the one place whose statements read and write every
 * module's rows of one player, on purpose — an erasure must be one transaction, and the map must be
 * the one list the schema test holds against the tables (docs/architecture.md "Modules").
 */
@Injectable()
export class PlayerDataRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findPlayer(uid: string, manager: EntityManager): Promise<{ username: string } | null> {
    const rows = await manager.query<Array<{ username: string }>>(
      'SELECT username FROM player WHERE uid = $1::bigint',
      [uid],
    );
    return rows[0] ?? null;
  }

  /**
   * Holds off, until the caller's commit, what copies players' rows in a transaction of its own,
   * so that none commits a copy of the player after their erasure: the day's rating history
   * snapshot (its advisory lock, shared here) and every period not yet archived in blocks (its
   * board_period row FOR SHARE: an archive starts by locking its row FOR UPDATE, and a close
   * updates it). Never waits: false when one of them runs now (the snapshot holds its lock, an
   * archive its row); the caller rolls back and tries again. Waiting here would hold the erasure's
   * locks for an archive's tens of seconds, and a close queued behind them would hold every upload.
   * After a false the transaction is aborted (a NOWAIT refusal is an error).
   */
  async holdCopies(manager: EntityManager): Promise<boolean> {
    const [snapshot] = await manager.query<Array<{ held: boolean }>>(
      'SELECT pg_try_advisory_xact_lock_shared($1) AS held',
      [SNAPSHOT_LOCK_KEY],
    );
    if (!snapshot.held) return false;
    try {
      await manager.query('SELECT id FROM board_period WHERE NOT archived_in_blocks FOR SHARE NOWAIT');
      return true;
    } catch (error) {
      if (isLockNotAvailable(error)) return false;
      throw error;
    }
  }

  /** The player row, locked for the erasure; null when there is none. */
  async lockPlayer(uid: string, manager: EntityManager): Promise<{ username: string } | null> {
    const rows = await manager.query<Array<{ username: string }>>(
      'SELECT username FROM player WHERE uid = $1::bigint FOR UPDATE',
      [uid],
    );
    return rows[0] ?? null;
  }

  async findErasure(uid: string, manager?: EntityManager): Promise<{ pseudonym: string; erasedAt: Date } | null> {
    const rows = await (manager ?? this.dataSource.manager).query<Array<{ pseudonym: string; erased_at: Date }>>(
      'SELECT pseudonym, erased_at FROM player_erasure WHERE uid = $1::bigint',
      [uid],
    );
    return rows[0] ? { pseudonym: rows[0].pseudonym, erasedAt: rows[0].erased_at } : null;
  }

  /**
   * Every exported table's rows of the player, read in one snapshot (the caller's transaction,
   * made REPEATABLE READ by its first statement here); null when there is no such player.
   */
  async exportRows(uid: string, manager: EntityManager): Promise<Record<string, unknown[]> | null> {
    await manager.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const tables: Record<string, unknown[]> = {};
    for (const entry of PLAYER_DATA) {
      if ('none' in entry.export) continue;
      tables[entry.key] = await manager.query<unknown[]>(
        `SELECT ${entry.export.columns} FROM "${entry.table}" WHERE ${entry.where} ORDER BY ${entry.export.orderBy}`,
        [uid],
      );
    }
    return tables.player.length === 0 ? null : tables;
  }

  /**
   * Deletes or anonymises every row of the map, in its order, inside the caller's transaction;
   * answers how many rows of each entry changed. `pseudonym` replaces the player in the audit rows,
   * through rhythmc_audit_pseudonymise (a function of the schema's owner: the service's role may
   * not UPDATE the audit log under the two-role set-up).
   */
  async erase(uid: string, pseudonym: string, manager: EntityManager): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    // The tombstone first: the audit rewrite (rhythmc_audit_pseudonymise) refuses a uid without one.
    await manager.query('INSERT INTO player_erasure (uid, pseudonym) VALUES ($1::bigint, $2)', [uid, pseudonym]);
    for (const entry of PLAYER_DATA) {
      if ('keep' in entry.erase) continue;
      counts[entry.key] = await this.eraseEntry(entry, uid, pseudonym, manager);
    }
    return counts;
  }

  private async eraseEntry(
    entry: PlayerDataEntry,
    uid: string,
    pseudonym: string,
    manager: EntityManager,
  ): Promise<number> {
    if ('delete' in entry.erase) {
      const [, affected] = await manager.query<[unknown[], number]>(
        `DELETE FROM "${entry.table}" WHERE ${entry.where}`,
        [uid],
      );
      return affected;
    }
    if ('call' in entry.erase) {
      const [row] = await manager.query<Array<{ n: number }>>(`SELECT ${entry.erase.call}($1::bigint, $2) AS n`, [
        uid,
        pseudonym,
      ]);
      return row.n;
    }
    if (!('set' in entry.erase)) return 0;
    const [, affected] = await manager.query<[unknown[], number]>(
      `UPDATE "${entry.table}" SET ${entry.erase.set} WHERE ${entry.where}`,
      [uid],
    );
    return affected;
  }
}
