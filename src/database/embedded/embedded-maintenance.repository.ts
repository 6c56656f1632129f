import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A table of the embedded database that autovacuum would visit now, and what it would do. */
export interface MaintenanceTarget {
  /** The schema-qualified name, quoted by PostgreSQL (format('%I.%I')). */
  table: string;
  /** VACUUM (ANALYZE) when true (dead rows, rows inserted since the last vacuum, old transaction ids); ANALYZE alone otherwise. */
  vacuum: boolean;
}

/**
 * The embedded database's upkeep statements (EmbeddedMaintenance). PGlite is a standalone
 * backend: nothing runs autovacuum, so without these no table is ever analyzed (every plan comes
 * from default estimates) or vacuumed (dead rows and index entries stay, and transaction ids are
 * never frozen). The thresholds are autovacuum's defaults.
 */
@Injectable()
export class EmbeddedMaintenanceRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The tables past autovacuum's default thresholds: changed rows since the last ANALYZE over
   * 50 + 10 % of the table; dead rows over 50 + 20 %, rows inserted since the last VACUUM over
   * 1,000 + 20 %, or a relfrozenxid older than vacuum_freeze_table_age's default (150 million: the
   * VACUUM is then an aggressive one that freezes the whole table). Most changed first. As
   * autovacuum, a table set `autovacuum_enabled = off` is left alone but for the old ids.
   */
  async due(): Promise<MaintenanceTarget[]> {
    const rows: Array<{ table: string; vacuum: boolean }> = await this.dataSource.query(
      `SELECT format('%I.%I', s.schemaname, s.relname) AS "table",
              (s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
               OR s.n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)
               OR age(c.relfrozenxid) > 150000000) AS vacuum
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE (coalesce((SELECT o.option_value FROM pg_options_to_table(c.reloptions) o
                          WHERE o.option_name = 'autovacuum_enabled'), 'on')::boolean
               AND (s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
                    OR s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
                    OR s.n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)))
           OR age(c.relfrozenxid) > 150000000
        ORDER BY s.n_mod_since_analyze + s.n_dead_tup DESC`,
    );
    return rows.map((row) => ({ table: row.table, vacuum: row.vacuum }));
  }

  /** One table's upkeep; `target.table` is PostgreSQL's own quoting of a name it listed. */
  async maintain(target: MaintenanceTarget): Promise<void> {
    await this.dataSource.query(target.vacuum ? `VACUUM (ANALYZE) ${target.table}` : `ANALYZE ${target.table}`);
  }
}
