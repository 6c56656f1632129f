import { bindingMismatch, IndexBinding, readBinding, redisRunId } from './redis-index-binding';

const DB = '9f1c2d44-0000-4000-8000-000000000001/16384';
const bound = (overrides: Partial<IndexBinding> = {}): IndexBinding => ({
  database: DB,
  version: 120,
  uid: '7',
  removal: false,
  redisRun: 'aaa',
  ...overrides,
});
const origin = (sequence: number, version: number | null, database = DB) => ({
  database,
  sequence: String(sequence),
  version: version === null ? null : String(version),
});
const reason = (binding: IndexBinding, from: ReturnType<typeof origin>, run: string | null = 'aaa') =>
  bindingMismatch(binding, from, run)?.reason ?? null;

describe('the Redis rank index binding', () => {
  it('reads the hash as written by the scripts', () => {
    expect(readBinding({})).toEqual({ database: null, version: null, uid: null, removal: false, redisRun: null });
    expect(readBinding({ db: DB, v: '120', u: '7', r: '1', rid: 'aaa' })).toEqual(bound({ removal: true }));
  });

  it('accepts an index of this database whose writes the database holds, in a Redis that kept running', () => {
    expect(reason(bound(), origin(120, 120))).toBeNull();
    // Later writes of the same player and of others: the database is ahead of the index, as it always is a little.
    expect(reason(bound(), origin(500, 130))).toBeNull();
    // Nothing written yet (a build of an empty database), or INFO refused (no run id to compare).
    expect(reason(bound({ version: null, uid: null }), origin(0, null))).toBeNull();
    expect(reason(bound({ redisRun: null }), origin(120, 120), 'bbb')).toBeNull();
    expect(reason(bound(), origin(120, 120), null)).toBeNull();
  });

  it('refuses an index that records no database, or another one', () => {
    expect(reason(bound({ database: null }), origin(120, 120))).toBe('unbound');
    expect(bindingMismatch(bound(), origin(120, 120, 'other/16384'), 'aaa')).toEqual({
      reason: 'other_database',
      detail: `the index was built from database ${DB}, this one is other/16384`,
    });
  });

  it('refuses an index ahead of the database: versions it never drew, or a player row older than the index', () => {
    expect(bindingMismatch(bound(), origin(119, null), 'aaa')).toEqual({
      reason: 'database_behind',
      detail: 'the index holds version 120, this database has drawn versions up to 119 (restored from a backup?)',
    });
    // The sequence went past (pg_dump reads it late; a recovered sequence may jump 32 ahead), the player's row did not.
    expect(bindingMismatch(bound(), origin(150, 110), 'aaa')).toEqual({
      reason: 'database_behind',
      detail:
        "the index holds player 7's entry at version 120, this database has version 110 for that player (restored from a backup?)",
    });
    expect(reason(bound(), origin(150, null))).toBe('database_behind');
  });

  it('reads a removal as the row gone or back later, not as a row older than it', () => {
    expect(reason(bound({ removal: true }), origin(150, null))).toBeNull();
    expect(reason(bound({ removal: true }), origin(150, 140))).toBeNull();
    expect(reason(bound({ removal: true }), origin(150, 110))).toBe('database_behind');
  });

  it('refuses an index a restarted Redis kept (an older save may miss writes)', () => {
    expect(reason(bound(), origin(120, 120), 'bbb')).toBe('redis_restarted');
    // A database mismatch is named first.
    expect(reason(bound(), origin(100, 100), 'bbb')).toBe('database_behind');
  });

  it("finds the run id in INFO server's text", () => {
    expect(redisRunId('# Server\r\nredis_version:7.0.15\r\nrun_id:4b6f0c1e2d\r\ntcp_port:6379\r\n')).toBe('4b6f0c1e2d');
    expect(redisRunId('# Server\r\nredis_version:7.0.15\r\n')).toBeNull();
  });
});
