/**
 * Which database a generation of the Redis rank index was built from, and how far it got
 * (docs/decisions.md "A Redis index bound to its database"). Kept in the generation's hash
 * `<generation>db`: `db` the database (RankSourceRepository.rankIndexOrigin), written before a
 * build writes an entry; `v` the highest version of a site entry ever written to it (an upsert or a
 * removal; every version comes from the database's rank_version_seq), `u` whose entry that was,
 * `r` '1' when it was a removal; `rid` Redis's run_id when the build began.
 */
export interface IndexBinding {
  database: string | null;
  version: number | null;
  uid: string | null;
  removal: boolean;
  redisRun: string | null;
}

/** The database side of the check (RankSourceRepository.rankIndexOrigin, read after Redis). */
export interface IndexOrigin {
  database: string;
  /** The last version drawn from rank_version_seq. */
  sequence: string;
  /** The rating version of the binding's player (null: no rating row). */
  version: string | null;
}

/** Why an index is not this database's (the label of rhythmc_rank_index_mismatches_total). */
export type MismatchReason = 'unbound' | 'other_database' | 'database_behind' | 'redis_restarted';

export interface Mismatch {
  reason: MismatchReason;
  detail: string;
}

export function readBinding(hash: Record<string, string>): IndexBinding {
  return {
    database: hash.db ?? null,
    version: hash.v === undefined ? null : Number(hash.v),
    uid: hash.u ?? null,
    removal: hash.r === '1',
    redisRun: hash.rid ?? null,
  };
}

/**
 * Whether a built index (its ready marker is there) may answer for this database. `redisRun` is
 * Redis's run_id now (null: INFO refused, the check is skipped). The database side must be read
 * after the binding: an entry reaches Redis only after its commit, so a database read later holds
 * every version the binding names, unless the database went back (a restore) or is another one.
 */
export function bindingMismatch(binding: IndexBinding, origin: IndexOrigin, redisRun: string | null): Mismatch | null {
  if (binding.database === null)
    return { reason: 'unbound', detail: 'the index records no database (built before indexes were bound)' };
  if (binding.database !== origin.database)
    return {
      reason: 'other_database',
      detail: `the index was built from database ${binding.database}, this one is ${origin.database}`,
    };
  if (binding.version !== null) {
    const sequence = Number(origin.sequence);
    if (binding.version > sequence)
      return {
        reason: 'database_behind',
        detail: `the index holds version ${binding.version}, this database has drawn versions up to ${sequence} (restored from a backup?)`,
      };
    const version = origin.version === null ? null : Number(origin.version);
    // An upsert's row must be there at that version or later; a removal's row, if back, later.
    const behind = binding.removal
      ? version !== null && version < binding.version
      : version === null || version < binding.version;
    if (behind)
      return {
        reason: 'database_behind',
        detail: `the index holds player ${binding.uid}'s ${binding.removal ? 'removal' : 'entry'} at version ${binding.version}, this database has ${version === null ? 'no rating row' : `version ${version}`} for that player (restored from a backup?)`,
      };
  }
  if (binding.redisRun !== null && redisRun !== null && binding.redisRun !== redisRun)
    return {
      reason: 'redis_restarted',
      detail: `Redis restarted with the index kept (run ${binding.redisRun} then ${redisRun}): writes after its last save may be missing`,
    };
  return null;
}

/** Redis's run_id from the text of `INFO server`; null when absent. */
export function redisRunId(info: string): string | null {
  const match = /^run_id:([0-9a-f]+)\s*$/m.exec(info);
  return match ? match[1] : null;
}
