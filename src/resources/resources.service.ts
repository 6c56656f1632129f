import { Inject, Injectable, Logger } from '@nestjs/common';
import { open, realpath } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UpsertedResponse } from '../common/dto/upserted.response';
import { matchesIfNoneMatch, PreparedJson, prepareJson } from '../common/http/prepared-json';
import { BadRequestError, ForbiddenError, NotFoundError, RangeNotSatisfiableError } from '../common/errors/app-error';
import { FieldProblem } from '../common/errors/field-problem';
import { TransactionService } from '../database/transaction.service';
import { DownloadEntry } from './dto/download.dto';
import { ManifestEntry, ManifestResponse } from './dto/manifest.dto';
import { AdminPackList, PackDto, PackManifestEntry } from './dto/pack.dto';
import { RescanResponse } from './dto/rescan.response';
import { parseByteRange } from './byte-range';
import { ResourceIndexService } from './resource-index.service';
import { ResourceLinksService } from './resource-links.service';
import { resourceKindOf, resourcePathProblem } from './resource-paths';
import { IndexedFile, ResourcesRepository } from './resources.repository';

/** Unknown paths quoted in one 404 message; the rest are counted. */
const MAX_LISTED_PATHS = 100;

export interface FileRequestHeaders {
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
  /** HEAD: headers only. */
  headOnly: boolean;
}

/** The credential of a file link, from its query: `expires` + `sig` (downloads) or `v` + `sig` (packs). */
export interface FileLink {
  expires: unknown;
  version: unknown;
  signature: unknown;
}

/** What the signed file route answers: a status, headers and, unless HEAD or 304, the bytes. */
export interface FileResponse {
  status: 200 | 206 | 304;
  headers: Record<string, string>;
  stream: Readable | null;
}

function quoteList(paths: string[]): string {
  const listed = paths.slice(0, MAX_LISTED_PATHS).map((path) => JSON.stringify(path));
  const rest = paths.length - listed.length;
  return rest > 0 ? `${listed.join(', ')} and ${rest} more` : listed.join(', ');
}

@Injectable()
export class ResourcesService {
  private readonly logger = new Logger('Resources');
  /** The manifest as sent, with and without Lang, for the index version it was read at. */
  private cachedManifest: { version: string; withLang: PreparedJson; withoutLang: PreparedJson } | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ResourcesRepository,
    private readonly index: ResourceIndexService,
    private readonly links: ResourceLinksService,
    private readonly tx: TransactionService,
  ) {}

  /**
   * GET /resources/manifest (decisions.md §6), as ready-to-send bytes with an ETag. Both variants
   * are serialised once per index version; each request checks the version (one single-row
   * query) and reads the index again only when a scan, on any instance, changed it. So a request
   * costs no serialisation (2.2 MiB of JSON at 20,000 files blocked the event loop every time).
   */
  async manifest(includeLang: boolean): Promise<PreparedJson> {
    const version = await this.repository.indexVersion();
    if (this.cachedManifest?.version !== version) {
      // The rows read after the version are at least as new as it; a later bump reloads them.
      const rows = await this.repository.listManifest(['data', 'lang']);
      const data: ManifestEntry[] = [];
      const lang: ManifestEntry[] = [];
      for (const row of rows) (row.kind === 'lang' ? lang : data).push({ path: row.path, sha256: row.sha256 });
      const withLang: ManifestResponse = { Data: data, Lang: lang };
      const withoutLang: ManifestResponse = { Data: data, Lang: [] };
      this.cachedManifest = { version, withLang: prepareJson(withLang), withoutLang: prepareJson(withoutLang) };
    }
    return includeLang ? this.cachedManifest.withLang : this.cachedManifest.withoutLang;
  }

  /**
   * POST /resources/down: one entry per distinct requested path, in request order. Every path
   * must be in the manifest (Data or Lang); otherwise 404 listing the unknown ones.
   */
  async downloads(paths: string[]): Promise<DownloadEntry[]> {
    const requested = [...new Set(paths)];
    if (requested.length === 0) return [];
    const files = new Map((await this.repository.findFiles(requested, ['data', 'lang'])).map((file) => [file.path, file]));
    const unknown = requested.filter((path) => !files.has(path));
    if (unknown.length > 0) throw new NotFoundError(`Unknown resource paths (${unknown.length}): ${quoteList(unknown)}`);
    const now = Math.floor(Date.now() / 1000);
    return Promise.all(
      requested.map(async (path) => {
        const file = files.get(path)!;
        return { path, url: await this.links.urlFor(path, now), bytes: file.size, sha256: file.sha256 };
      }),
    );
  }

  /** GET /resources/packmanifest: described packs whose file is indexed (others are left out and logged). */
  async packManifest(): Promise<PackManifestEntry[]> {
    const packs = await this.repository.listPacks();
    const entries: PackManifestEntry[] = [];
    for (const pack of packs) {
      if (pack.size === null || pack.sha1 === null) {
        this.logger.warn(`Pack ${JSON.stringify(pack.name)} left out of the pack manifest: ${JSON.stringify(pack.file)} is not indexed`);
        continue;
      }
      entries.push({
        name: pack.name,
        displayName: pack.displayName,
        type: pack.type,
        availableSongs: pack.availableSongs,
        size: pack.size,
        sha1: pack.sha1,
        url: await this.links.packUrlFor(pack.file, pack.sha1),
      });
    }
    return entries;
  }

  /** GET /admin/packs: every described pack, its file as indexed (or not). */
  async listPacks(): Promise<AdminPackList> {
    const packs = await this.repository.listPacks();
    return {
      items: packs.map((pack) => ({
        name: pack.name,
        displayName: pack.displayName,
        type: pack.type,
        availableSongs: pack.availableSongs,
        file: pack.file,
        size: pack.size,
        sha1: pack.sha1,
      })),
    };
  }

  /** PUT /admin/packs: the whole batch is checked, then stored in one transaction, or nothing is. */
  async upsertPacks(packs: PackDto[]): Promise<UpsertedResponse> {
    const problems: FieldProblem[] = [];
    const firstIndexByName = new Map<string, number>();
    packs.forEach((pack, index) => {
      const first = firstIndexByName.get(pack.name);
      if (first !== undefined) problems.push({ index, field: 'name', message: `${JSON.stringify(pack.name)} is already given at [${first}]` });
      else firstIndexByName.set(pack.name, index);
      const problem = resourcePathProblem(pack.file);
      if (problem !== null) problems.push({ index, field: 'file', message: problem });
      else if (resourceKindOf(pack.file) !== 'pack') problems.push({ index, field: 'file', message: 'must name a .zip file directly under packs/' });
    });
    if (problems.length > 0) throw batchError(problems, ({ field }) => (field === 'name' ? ': ' : ' '));

    return this.tx.run(async (manager) => {
      const indexed = new Set((await this.repository.findFiles([...new Set(packs.map((pack) => pack.file))], ['pack'], manager)).map((file) => file.path));
      const missing = packs.flatMap((pack, index): FieldProblem[] =>
        indexed.has(pack.file) ? [] : [{ index, field: 'file', message: `${JSON.stringify(pack.file)} is not in the resource index` }],
      );
      if (missing.length > 0) throw batchError(missing, () => ': ');
      await this.repository.upsertPacks(
        packs.map((pack) => ({
          name: pack.name,
          displayName: pack.displayName,
          type: pack.type,
          availableSongs: [...new Set(pack.availableSongs)],
          file: pack.file,
        })),
        manager,
      );
      return { upserted: packs.length };
    });
  }

  async deletePack(name: string): Promise<void> {
    if (!(await this.repository.deletePack(name))) throw new NotFoundError(`No pack named ${JSON.stringify(name)}`);
  }

  /** POST /admin/resources/rescan. */
  async rescan(): Promise<RescanResponse> {
    const { totals } = await this.index.rescan();
    return { data: totals.data, lang: totals.lang, packs: totals.packs, bytes: totals.bytes };
  }

  /**
   * GET /resources/files/<path>?expires=&sig=, the target of signed links: 403 unless the
   * signature is valid and unexpired, 404 when the file is no longer indexed (or changed since
   * it was), else the file or the one byte range asked for, with the SHA-256 as ETag.
   */
  async openFile(path: string, link: FileLink, request: FileRequestHeaders): Promise<FileResponse> {
    const pack = link.version !== undefined;
    if (pack && link.expires !== undefined) throw new ForbiddenError('Missing or malformed link signature');
    switch (pack ? await this.links.checkPack(path, link.version, link.signature) : await this.links.check(path, link.expires, link.signature)) {
      case 'malformed':
        throw new ForbiddenError('Missing or malformed link signature');
      case 'bad-signature':
        throw new ForbiddenError('Invalid link signature');
      case 'expired':
        throw new ForbiddenError('The link has expired');
      case 'ok':
        break;
    }
    const file = pack ? await this.packLinkTarget(path, link.version) : await this.repository.findFile(path);
    if (!file) throw new NotFoundError(`Resource ${JSON.stringify(path)} is not in the index`);

    const handle = await this.openIndexedFile(path);
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile() || Number(info.size) !== file.size || info.mtimeNs !== file.mtimeNs) {
        this.logger.warn(`${JSON.stringify(path)} changed on disk since it was indexed; rescan the resources`);
        throw new NotFoundError(`Resource ${JSON.stringify(path)} changed since it was indexed`);
      }
      const etag = `"${file.sha256}"`;
      const headers: Record<string, string> = {
        ETag: etag,
        'Accept-Ranges': 'bytes',
        'Cache-Control': 'no-cache',
        'Content-Type': 'application/octet-stream',
        'X-Content-Type-Options': 'nosniff',
      };
      if (matchesIfNoneMatch(request.ifNoneMatch, etag)) {
        await handle.close();
        return { status: 304, headers: { ETag: etag, 'Cache-Control': 'no-cache' }, stream: null };
      }
      // If-Range: the range only applies to the representation the client already has.
      const range = request.ifRange === undefined || request.ifRange.trim() === etag ? parseByteRange(request.range, file.size) : { kind: 'full' as const };
      if (range.kind === 'unsatisfiable') {
        throw new RangeNotSatisfiableError(`The range ${JSON.stringify(request.range)} is outside the ${file.size} bytes of the file`, file.size);
      }
      const [status, start, end] = range.kind === 'partial' ? [206 as const, range.start, range.end] : [200 as const, 0, file.size - 1];
      headers['Content-Length'] = String(end - start + 1);
      if (status === 206) headers['Content-Range'] = `bytes ${start}-${end}/${file.size}`;
      if (request.headOnly || file.size === 0) {
        await handle.close();
        return { status, headers, stream: null };
      }
      return { status, headers, stream: handle.createReadStream({ start, end, highWaterMark: 256 * 1024 }) };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * The file of a pack link, which works while a described pack names the file and the file is
   * still the one signed (decisions.md §6): a pack withdrawn (DELETE /admin/packs) or moved to
   * another file, or a file rebuilt, is 404. Read from the database at every request, so every
   * instance answers alike.
   */
  private async packLinkTarget(path: string, version: unknown): Promise<IndexedFile | null> {
    const file = await this.repository.findPackFile(path);
    if (file === null) return null;
    if (!file.described) throw new NotFoundError(`No pack offers ${JSON.stringify(path)} any more; load the pack manifest again`);
    if (file.sha1 !== version) {
      throw new NotFoundError(`The pack ${JSON.stringify(path)} changed since this link was issued; load the pack manifest again`);
    }
    return file;
  }

  /** Opens an indexed path, refusing anything that resolves outside RESOURCE_DIR (a symlink swapped in). */
  private async openIndexedFile(path: string): Promise<FileHandle> {
    const root = this.config.resourceDir;
    try {
      const [realRoot, realFile] = await Promise.all([realpath(root), realpath(join(root, path))]);
      if (!realFile.startsWith(realRoot + sep)) throw new NotFoundError(`Resource ${JSON.stringify(path)} is not in the index`);
      return await open(realFile, 'r');
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new NotFoundError(`Resource ${JSON.stringify(path)} is no longer on disk`);
      throw error;
    }
  }
}

/** A 400 about elements of PUT /admin/packs: `[i].field<joint>problem` lines, the problems by index. */
function batchError(problems: FieldProblem[], joint: (problem: FieldProblem) => string): BadRequestError {
  const lines = problems.map((problem) => `[${problem.index}].${problem.field}${joint(problem)}${problem.message}`);
  return new BadRequestError(lines.join('; '), problems);
}
