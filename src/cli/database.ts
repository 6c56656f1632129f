/**
 * Backup and restore of the embedded database (docs/operations.md "Backup and restore"):
 *
 *   npm run database -- backup --out <file> [--url <url>]   # while the service serves
 *   npm run database -- restore <file>                      # into DATA_DIR, which must be new or empty
 *
 * `backup` asks the running service (only it holds the data dir) for POST /admin/database/backup
 * with STAFF_TOKEN, else ADMIN_TOKEN, from the environment (an owner's), checks the answer's
 * SHA-256 and writes the file, never over an existing one. `--url` defaults to the service's
 * PUBLIC_BASE_URL rule, as the admin CLI's. On PostgreSQL the service answers 409: use pg_dump.
 * `restore` needs no service: it writes the backup into DATA_DIR (refused when DATA_DIR has
 * anything in it), and the service is then started on it. Exit 0 on success, 1 on a failure or a
 * refusal, 2 on a usage mistake.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/app-config';
import { EmbeddedDatabaseLockedError } from '../database/embedded/embedded-database';
import {
  NotABackupError,
  restoreEmbeddedBackup,
  RestoreTargetNotEmptyError,
} from '../database/embedded/embedded-restore';

const USAGE =
  'usage: npm run database -- backup --out <file> [--url <url>]   (STAFF_TOKEN or ADMIN_TOKEN of an owner)\n' +
  '       npm run database -- restore <file>                      (into DATA_DIR, which must be new or empty)';

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

class Failure extends Error {}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

function post(url: URL, token: string): Promise<Answer> {
  const options = {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'User-Agent': 'rhythmc-database-cli/1.0' },
  };
  return new Promise((resolve, reject) => {
    const callback = (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    };
    const request =
      url.protocol === 'https:' ? httpsRequest(url, options, callback) : httpRequest(url, options, callback);
    request.on('error', reject);
    request.end();
  });
}

async function backup(out: string, urlFlag: string | undefined, env: NodeJS.ProcessEnv, output: Output): Promise<void> {
  const token = env.STAFF_TOKEN?.trim() || env.ADMIN_TOKEN?.trim();
  if (!token) throw new Failure('neither STAFF_TOKEN nor ADMIN_TOKEN is set (an owner may take a backup)');
  const base = (urlFlag ?? loadConfig(env).publicBaseUrl).replace(/(?<!\/)\/+$/, '');
  const url = new URL(`${base}/admin/database/backup`);
  let answer: Answer;
  try {
    answer = await post(url, token);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Failure(`cannot reach ${base}: ${typeof code === 'string' ? code : String(error)}`);
  }
  if (answer.status !== 200) {
    const text = answer.body.toString('utf8').slice(0, 500);
    throw new Failure(`the service answered ${answer.status}: ${text || 'no body'}`);
  }
  const sha256 = createHash('sha256').update(answer.body).digest('hex');
  if (sha256 !== answer.headers['x-backup-sha256'])
    throw new Failure(
      'the backup arrived damaged (its SHA-256 differs from the one the service sent); nothing written',
    );
  // Written beside the target and renamed: a file named like the backup is always a whole one.
  const partial = `${out}.partial`;
  let fd: number;
  try {
    if (existsSync(out)) throw new Error('the file exists (a backup is never written over another file)');
    fd = openSync(partial, 'wx', 0o600);
  } catch (error) {
    throw new Failure(`cannot write ${out}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    // writeSync writes at most about 2 GiB a call (Linux's limit): loop until every byte is down,
    // then flush it to the disk before the name says the backup is whole.
    for (let written = 0; written < answer.body.length;)
      written += writeSync(fd, answer.body, written, answer.body.length - written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(partial, { force: true });
    throw new Failure(`cannot write ${out}: ${error instanceof Error ? error.message : String(error)}`);
  }
  closeSync(fd);
  renameSync(partial, out);
  output.out(JSON.stringify({ file: out, bytes: answer.body.length, sha256 }));
}

async function restore(file: string, env: NodeJS.ProcessEnv, output: Output): Promise<void> {
  const config = loadConfig(env);
  if (config.databaseUrl !== null)
    throw new Failure('DATABASE_URL is set: restore a PostgreSQL backup with pg_restore (docs/operations.md)');
  let tarball: Buffer;
  try {
    tarball = readFileSync(file);
  } catch (error) {
    throw new Failure(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    const { tables } = await restoreEmbeddedBackup(tarball, config.dataDir);
    output.out(JSON.stringify({ dataDir: config.dataDir, tables }));
  } catch (error) {
    if (
      error instanceof RestoreTargetNotEmptyError ||
      error instanceof NotABackupError ||
      error instanceof EmbeddedDatabaseLockedError
    )
      throw new Failure(error.message);
    throw error;
  }
}

/** Runs one command line; returns the exit status. */
export async function runDatabaseCli(argv: string[], env: NodeJS.ProcessEnv, output: Output): Promise<number> {
  let parsed: { positionals: string[]; values: { out?: string; url?: string } };
  try {
    parsed = parseArgs({
      args: argv,
      options: { out: { type: 'string' }, url: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    output.err(`error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const [command, file, ...extra] = parsed.positionals;
  const { out, url } = parsed.values;
  const usable =
    extra.length === 0 &&
    ((command === 'backup' && file === undefined && out !== undefined) ||
      (command === 'restore' && file !== undefined && out === undefined && url === undefined));
  if (!usable) {
    output.err(USAGE);
    return 2;
  }
  try {
    if (command === 'backup') await backup(out as string, url, env, output);
    else await restore(file, env, output);
    return 0;
  } catch (error) {
    if (!(error instanceof Failure) && !(error instanceof ConfigError)) throw error;
    output.err(`error: ${error.message}`);
    return 1;
  }
}

if (require.main === module) {
  runDatabaseCli(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
