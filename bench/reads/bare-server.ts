/**
 * The baseline of the reads benchmark (bench/reads/run.ts): a bare Express + pg server answering
 * the plugin's reads with the service's own SQL and response shapes, and the one query every
 * authenticated request of the service makes (the server session by the SHA-256 of the bearer
 * token). No framework, validation, error mapping, logging or metrics. `GET /server/ping`
 * answers `true` with no database at all: the pipeline's own cost.
 */
import express from 'express';
import { createHash } from 'node:crypto';
import { Pool } from 'pg';
import { formatLocalDateTime } from '../../src/common/time';
import { RankedBalanceRow, TOP_BALANCES_SQL } from '../../src/economy/economy.repository';
import { signPackLink, signResourceLink } from '../../src/resources/link-signature';
import { encodeResourcePath } from '../../src/resources/resource-paths';
import { benchDatabaseUrl, intFromEnv } from '../harness/env';
import { serveBare } from '../harness/bare';
import { baltopEntries } from '../public/answers';

const pool = new Pool({ connectionString: benchDatabaseUrl('rhythmc_bench_economy'), max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

const fail = (res: express.Response) => () =>
  res.status(500).json({ error: 'INTERNAL_ERROR', message: 'Internal error' });

/** The service's server-token check: one indexed lookup. */
async function authorised(req: express.Request, res: express.Response): Promise<boolean> {
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!token) {
    res.status(401).json({ error: 'UNAUTHORIZED', message: 'Missing bearer server access token' });
    return false;
  }
  const { rows } = await pool.query<{ token_expires_at: Date; ended_at: Date | null }>(
    'SELECT id, server_id, token_expires_at, ended_at FROM server_session WHERE token_hash = $1 LIMIT 1',
    [createHash('sha256').update(token).digest('hex')],
  );
  const session = rows[0];
  if (!session || session.ended_at !== null || session.token_expires_at.getTime() <= Date.now()) {
    res.status(401).json({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
    return false;
  }
  return true;
}

/** An authenticated read: the token check, then the handler's query (POST reads take a JSON body). */
function read(path: string, answer: (req: express.Request) => Promise<unknown>, method: 'get' | 'post' = 'get'): void {
  app[method](path, (req, res) => {
    authorised(req, res)
      .then(async (ok) => {
        if (ok) res.json(await answer(req));
      })
      .catch(fail(res));
  });
}

app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ok' });
});

app.get('/server/ping', (_req, res) => {
  res.json(true);
});

read('/server/baltop', async (req) => {
  const limitParam = req.query.limit;
  const limit = typeof limitParam === 'string' && /^\d{1,3}$/.test(limitParam) ? Number(limitParam) : 10;
  const { rows } = await pool.query<RankedBalanceRow>(TOP_BALANCES_SQL, [limit]);
  return baltopEntries(rows);
});

read('/server/charts', async () => {
  const { rows } = await pool.query<{
    level_id: number;
    name: string;
    difficulty_constant: number;
    version: string;
    created_at: Date;
  }>('SELECT level_id, name, difficulty_constant, version, created_at FROM chart WHERE active ORDER BY level_id');
  return rows.map((row) => ({
    levelId: row.level_id,
    name: row.name,
    difficultyConstant: row.difficulty_constant,
    version: row.version,
    createdAt: formatLocalDateTime(row.created_at),
  }));
});

read('/server/collections', async () => {
  const { rows } = await pool.query<{ key: string; type: string; unlock_method: unknown; properties: unknown }>(
    "SELECT key, type, unlock_method, properties FROM collection WHERE type <> 'asset' ORDER BY key",
  );
  return rows.map((row) => ({
    key: row.key,
    type: row.type,
    unlockMethod: row.unlock_method,
    properties: row.properties,
  }));
});

read('/resources/manifest', async (req) => {
  const { rows } = await pool.query<{ path: string; sha256: string; kind: string }>(
    "SELECT path, sha256, kind FROM resource_file WHERE kind IN ('data', 'lang') ORDER BY path",
  );
  const lang = req.query.lang === 'true';
  return {
    Data: rows.filter((row) => row.kind === 'data').map((row) => ({ path: row.path, sha256: row.sha256 })),
    Lang: lang ? rows.filter((row) => row.kind === 'lang').map((row) => ({ path: row.path, sha256: row.sha256 })) : [],
  };
});

/** The service's link key (read once) and its asset address (ASSET_SERVER_URL, given by run.ts). */
let signingKey: Promise<Buffer> | null = null;
const assetServerUrl = process.env.ASSET_SERVER_URL ?? '';
const linkTtlSeconds = intFromEnv('RESOURCE_LINK_TTL_SECONDS', 3600);
const linkKey = () =>
  (signingKey ??= pool
    .query<{ secret: string }>('SELECT secret FROM resource_signing_key WHERE id = 1')
    .then(({ rows }) => Buffer.from(rows[0].secret, 'hex')));

/** The download links of the requested paths (the service's query and its expiring signature); 404 for unknown paths is left out. */
app.use('/resources/down', express.json({ limit: 256 * 1024 }));
read(
  '/resources/down',
  async (req) => {
    const requested = [...new Set(req.body as string[])];
    const key = await linkKey();
    const { rows } = await pool.query<{ path: string; size: string; sha256: string }>(
      'SELECT path, kind, size, mtime_ns, sha256, sha1 FROM resource_file WHERE path = ANY($1::varchar[]) AND kind = ANY($2::varchar[])',
      [requested, ['data', 'lang']],
    );
    const files = new Map(rows.map((row) => [row.path, row]));
    const expiresAt = Math.floor(Date.now() / 1000) + linkTtlSeconds;
    return requested.map((path) => {
      const file = files.get(path)!;
      const url = `${assetServerUrl}/resources/files/${encodeResourcePath(path)}?expires=${expiresAt}&sig=${signResourceLink(key, path, expiresAt)}`;
      return { path, url, bytes: Number(file.size), sha256: file.sha256 };
    });
  },
  'post',
);

read('/resources/packmanifest', async () => {
  const key = await linkKey();
  const { rows } = await pool.query<{
    name: string;
    display_name: string;
    type: string;
    available_songs: number[];
    file: string;
    size: string | null;
    sha1: string | null;
  }>(
    `SELECT p.name, p.display_name, p.type, p.available_songs, p.file, f.size, f.sha1
       FROM resource_pack p LEFT JOIN resource_file f ON f.path = p.file AND f.kind = 'pack' ORDER BY p.name`,
  );
  return rows
    .filter((row) => row.size !== null && row.sha1 !== null)
    .map((row) => ({
      name: row.name,
      displayName: row.display_name,
      type: row.type,
      availableSongs: row.available_songs,
      size: Number(row.size),
      sha1: row.sha1,
      url: `${assetServerUrl}/resources/files/${encodeResourcePath(row.file)}?v=${row.sha1}&sig=${signPackLink(key, row.file, row.sha1 as string)}`,
    }));
});

serveBare(app, pool);
