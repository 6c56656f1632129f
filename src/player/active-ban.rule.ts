/*
 * The active-ban rule: a ban is in force while it is not lifted and is permanent or not yet over.
 * Its forms, kept together here and compared by test/e2e/twin-rules.e2e-spec.ts:
 *   - activeBan: SQL, on a player_ban row (player reads; through activeBanPredicate, the ranks and
 *     boards of economy and upload, which leave banned players out in the same statement);
 *   - banIsActive: TypeScript, on a loaded ban (the admin profile's `active`).
 * The database functions that check a ban write the same condition inline (rhythmc_upload_record,
 * rhythmc_player_login, rhythmc_webhook_atp; their files in src/<module>/sql/);
 * the same test extracts each copy from the function's text and compares it with banIsActive.
 */

/** SQL condition: the ban row aliased `ban` is in force at the statement's now(). */
export const activeBan = (ban: string) => `${ban}.lifted_at IS NULL AND (${ban}.until IS NULL OR ${ban}.until > now())`;

/** SQL predicate of an active ban of the player aliased `alias` (for orderings in other modules' queries). */
export const activeBanPredicate = (alias: string) =>
  `EXISTS (SELECT 1 FROM player_ban b WHERE b.uid = ${alias}.uid AND ${activeBan('b')})`;

/** activeBan in TypeScript, at `now` (ms since the epoch). */
export const banIsActive = (ban: { liftedAt: Date | null; until: Date | null }, now: number): boolean =>
  ban.liftedAt === null && (ban.until === null || ban.until.getTime() > now);
