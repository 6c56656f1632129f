import type { TrackPosition } from '../ranking';

/*
 * The new-best rule: a play is a player's new best on its chart when it is the first, has a
 * higher acc, or the same acc reached earlier (first times on the service's clock). Two forms:
 *   - improves: TypeScript, for the upload's transactional path (UploadService);
 *   - rhythmc_best_improves: SQL (upload/sql/rhythmc_best_improves.sql), called by the one-statement
 *     upload (rhythmc_upload_record) and by the period bests (rhythmc_count_period_play).
 * test/e2e/twin-rules.e2e-spec.ts runs both over the same plays and asserts they agree.
 */

/** Whether `play` beats `best` (null: no best yet). */
export function improves(play: TrackPosition, best: TrackPosition | null): boolean {
  return best === null || play.acc > best.acc || (play.acc === best.acc && play.firstTimeMs < best.firstTimeMs);
}
