import { ConsoleLogger, Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { RankSourceRepository } from '../rank-source.repository';
import { SitePage, TrackPage } from '../rank-source-pages';
import type { RankChange } from '../ranking.types';
import { MemoryRankIndex } from './memory-rank-index';

/**
 * The tables behind the index, in memory (site order only): ratings with the change_seq their
 * trigger sets, and a switch that makes every query fail as a stopped database does.
 */
class FakeTables {
  readonly atp = new Map<number, number>();
  private readonly changeSeq = new Map<number, number>();
  private seq = 0;
  down = false;
  sitePages = 0;
  /** Runs once right after the next site page is read (a write that commits while a load runs). */
  afterNextPage: (() => void) | null = null;
  rereads: number[][] = [];

  write(uid: number, atpE4: number): void {
    this.atp.set(uid, atpE4);
    this.changeSeq.set(uid, ++this.seq);
  }

  /** Players ahead of `uid` in the site order (ATP descending, then uid). */
  ahead(uid: number): number {
    const own = this.atp.get(uid) as number;
    let ahead = 0;
    for (const [other, atpE4] of this.atp) if (atpE4 > own || (atpE4 === own && other < uid)) ahead++;
    return ahead;
  }

  private answer(): void {
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  }

  repository(): RankSourceRepository {
    const site = (uids: number[]) => {
      const rows = Buffer.alloc(16 * uids.length);
      uids.forEach((uid, i) => {
        rows.writeBigInt64BE(BigInt(this.atp.get(uid) as number), 16 * i);
        rows.writeBigInt64BE(BigInt(uid), 16 * i + 8);
      });
      return new SitePage(uids.length ? [rows] : []);
    };
    const fake = {
      changeWatermark: () => Promise.resolve().then(() => (this.answer(), String(this.seq))),
      snapshotIdentity: () =>
        Promise.resolve().then(
          () => (this.answer(), { database: '1:fake', migration: 'm', watermark: String(this.seq) }),
        ),
      changedSince: (watermark: string) =>
        Promise.resolve().then(() => {
          this.answer();
          return [...this.changeSeq].filter(([, seq]) => seq > Number(watermark)).map(([uid]) => String(uid));
        }),
      rankKeysOf: (uids: string[]) =>
        Promise.resolve().then(() => {
          this.answer();
          this.rereads.push(uids.map(Number).sort((a, b) => a - b));
          return { sites: site(uids.map(Number).filter((uid) => this.atp.has(uid))), tracks: new TrackPage([]) };
        }),
      rankRowCounts: () => Promise.resolve().then(() => (this.answer(), { ratings: this.atp.size, bests: 0 })),
      pageSiteOrder: (after: { atpE4: number; uid: number } | null, limit: number) =>
        Promise.resolve().then(() => {
          this.answer();
          this.sitePages++;
          const order = [...this.atp.keys()].sort((a, b) => this.atp.get(b)! - this.atp.get(a)! || a - b);
          const from = after === null ? 0 : order.findIndex((uid) => uid === after.uid) + 1;
          const page = site(order.slice(from, from + limit));
          const then = this.afterNextPage;
          this.afterNextPage = null;
          then?.();
          return page;
        }),
      pageTrackOrder: () => Promise.resolve().then(() => (this.answer(), new TrackPage([]))),
    };
    return fake as unknown as RankSourceRepository;
  }
}

const change = (uid: number, before: number, after: number): RankChange => ({
  uid: String(uid),
  site: { before, after },
  tracks: [],
});

describe('MemoryRankIndex: one repair at a time after writes that failed after staging', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(new ConsoleLogger());
  });
  let dataDir: string;
  let tables: FakeTables;
  let index: MemoryRankIndex;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rank-index-spec-'));
    tables = new FakeTables();
    for (let uid = 1; uid <= 100; uid++) tables.write(uid, 10_000 * uid);
    index = new MemoryRankIndex({ databaseUrl: null, dataDir } as AppConfig, tables.repository());
    await index.onApplicationBootstrap();
    await index.saveSnapshot();
  });
  afterEach(async () => {
    await index.onApplicationShutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const siteAhead = async (uid: number) => {
    const positions = await index.positions(
      { uid: String(uid), version: 0, atpE4: tables.atp.get(uid)!, levelId: 1, best: null },
      null,
    );
    return positions === null ? null : positions.siteAhead;
  };
  const untilReady = async () => {
    for (let waited = 0; !(await index.stats()).ready; waited += 20) {
      if (waited > 10_000) throw new Error('the index did not answer again within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('15 writes failing during a database stop make one repair once it is back: their players re-read, no full load, the same positions as the tables', async () => {
    const loads = tables.sitePages;
    tables.down = true;
    const failed = Array.from({ length: 15 }, (_, i) => 10 + i);
    const writes = failed.map((uid, i) =>
      index
        .runWrite([String(uid)], (write) => {
          // Staged before a commit whose answer was lost: odd ones committed, even ones did not.
          write.stage([change(uid, 10_000 * uid, 5_000_000 + uid)], null);
          if (i % 2 === 1) tables.write(uid, 5_000_000 + uid);
          return Promise.reject(new Error('Connection terminated unexpectedly'));
        })
        .catch((error: Error) => error.message),
    );
    expect(await Promise.all(writes)).toEqual(Array(15).fill('Connection terminated unexpectedly'));
    expect((await index.stats()).ready).toBe(false);
    expect(await siteAhead(50)).toBeNull();

    // Down for a while: the one repair is tried again (every second), nothing loads the tables.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    tables.down = false;
    await untilReady();

    expect(tables.sitePages).toBe(loads);
    // One repair, in one round: the players in doubt and those whose rows changed, read once.
    expect(tables.rereads).toEqual([failed]);
    for (let uid = 1; uid <= 100; uid++)
      expect({ uid, ahead: await siteAhead(uid) }).toEqual({ uid, ahead: tables.ahead(uid) });
  });

  it('a write that fails before it staged anything (a refused connection) leaves the index answering', async () => {
    const failure = await index
      .runWrite(['7'], () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })))
      .catch((error: Error) => error.message);
    expect(failure).toBe('connect ECONNREFUSED');
    expect((await index.stats()).ready).toBe(true);
    expect(tables.rereads).toEqual([]);
  });

  it('loads the tables again on rebuild(), while writes go on, and re-reads the players written during the load', async () => {
    const loads = tables.sitePages;
    // A write that commits after the load read its player's page: it stages nothing (ranks from
    // SQL meanwhile) and is re-read once the load is done.
    let staged: unknown = 'not run';
    tables.afterNextPage = () => {
      tables.write(3, 9_000_000);
      void index.runWrite(['3'], (write) =>
        Promise.resolve((staged = write.stage([change(3, 30_000, 9_000_000)], null))),
      );
    };
    await index.rebuild();
    await index.saveSnapshot();
    expect(staged).toBeNull();
    expect(tables.sitePages).toBeGreaterThan(loads);
    expect(tables.rereads.flat()).toContain(3);
    expect(await siteAhead(3)).toBe(0);
    for (let uid = 1; uid <= 100; uid++)
      expect({ uid, ahead: await siteAhead(uid) }).toEqual({ uid, ahead: tables.ahead(uid) });
  });
});
