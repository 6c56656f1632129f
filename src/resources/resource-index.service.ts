import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TransactionService } from '../database/transaction.service';
import { FoundFile, HASH_CONCURRENCY, hashFile, listResourceFiles, mapLimit } from './resource-scanner';
import { IndexedFile, IndexedState, IndexTotals, ResourcesRepository } from './resources.repository';

export interface RescanResult {
  totals: IndexTotals;
  /** Files whose hashes were computed by this scan (new or changed). */
  hashed: number;
  /** Files that left the index. */
  removed: number;
}

/** True when the stored hashes no longer describe the file. */
export function needsHashing(file: FoundFile, known: IndexedState | undefined): boolean {
  if (!known) return true;
  return known.size !== file.size || known.mtimeNs !== file.mtimeNs || known.kind !== file.kind || (file.kind === 'pack' && !known.hasSha1);
}

/**
 * Keeps the resource_file index in step with RESOURCE_DIR: at start-up and on
 * POST /admin/resources/rescan. Only files whose size or modification time changed are read
 * again; hashing happens before the (short) write transaction, never inside it.
 */
@Injectable()
export class ResourceIndexService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Resources');
  /** Scans of this process run one after the other. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ResourcesRepository,
    private readonly tx: TransactionService,
  ) {}

  /** The service starts with a current index; a failed scan keeps the previous one and is logged. */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.rescan();
    } catch (error) {
      this.logger.error(`Indexing ${this.config.resourceDir} failed; serving the previous index: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }

  rescan(): Promise<RescanResult> {
    const run = this.queue.then(() => this.scan());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async scan(): Promise<RescanResult> {
    const started = Date.now();
    const root = this.config.resourceDir;
    const [{ files, skipped }, known] = await Promise.all([listResourceFiles(root), this.repository.loadIndexState()]);
    for (const { path, reason } of skipped) this.logger.warn(`Not indexed: ${JSON.stringify(path)}: ${reason}`);

    const stale = files.filter((file) => needsHashing(file, known.get(file.path)));
    const results = await mapLimit(stale, HASH_CONCURRENCY, async (file): Promise<IndexedFile | null> => {
      // The stat taken before reading is stored: a file changed while it is read gets a newer
      // mtime, so the next scan reads it again.
      const hashes = await hashFile(join(root, file.path), file.kind === 'pack');
      return hashes && { ...file, ...hashes };
    });
    const hashed = results.filter((file): file is IndexedFile => file !== null);
    // A file deleted between the listing and its hashing is gone, not an error.
    const vanished = new Set(stale.filter((_, index) => results[index] === null).map((file) => file.path));
    const present = new Set(files.filter((file) => !vanished.has(file.path)).map((file) => file.path));
    const removed = [...known.keys()].filter((path) => !present.has(path));

    if (hashed.length > 0 || removed.length > 0) {
      await this.tx.run((manager) => this.repository.applyScan(hashed, removed, manager));
    }
    const totals = await this.repository.totals();
    this.logger.log(
      `Indexed ${root}: ${totals.data} data, ${totals.lang} lang, ${totals.packs} packs, ${totals.bytes} bytes; ` +
        `${hashed.length} hashed, ${removed.length} removed in ${Date.now() - started} ms`,
    );
    return { totals, hashed: hashed.length, removed: removed.length };
  }
}
