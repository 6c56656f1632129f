/**
 * The packed pages a rank index loads (RankSourceRepository.pageSiteOrder, pageTrackOrder): rows
 * read by position from the byteas the statements answer, without an object per row.
 */

/** A row of a chart's order (level, acc, first reached, uid), as the index loads it. */
export interface TrackOrderRow {
  levelId: number;
  acc: number;
  firstTimeMs: number;
  uid: number;
}

/** A signed int8 sent big-endian (int8send), as a number (exact below 2^53, as uids and times are). */
const int8At = (bytes: Buffer, offset: number) => bytes.readInt32BE(offset) * 2 ** 32 + bytes.readUInt32BE(offset + 4);

/**
 * Rows packed in byteas of whole rows (`rowBytes` each), read by position without an object per
 * row (a load reads millions): seek(i) points `bytes` and `offset` at row i; sequential reads stay
 * in one chunk.
 */
class PackedRows {
  readonly count: number;
  protected bytes: Buffer = Buffer.alloc(0);
  protected offset = 0;
  private chunk = 0;
  private readonly firsts: number[] = [];

  constructor(
    private readonly chunks: Buffer[],
    private readonly rowBytes: number,
  ) {
    let count = 0;
    for (const chunk of chunks) {
      this.firsts.push(count);
      count += chunk.length / rowBytes;
    }
    this.count = count;
  }

  protected seek(i: number): void {
    const first = this.firsts[this.chunk];
    if (i < first || i >= first + this.chunks[this.chunk].length / this.rowBytes) {
      this.chunk = 0;
      while (this.chunk + 1 < this.chunks.length && this.firsts[this.chunk + 1] <= i) this.chunk++;
    }
    this.bytes = this.chunks[this.chunk];
    this.offset = (i - this.firsts[this.chunk]) * this.rowBytes;
  }
}

/** A page of the site order packed by pageSiteOrder: per row int8 ATP in ten-thousandths, int8 uid. */
export class SitePage extends PackedRows {
  constructor(chunks: Buffer[]) {
    super(chunks, 16);
  }
  atpE4(i: number): number {
    this.seek(i);
    return int8At(this.bytes, this.offset);
  }
  uid(i: number): number {
    this.seek(i);
    return int8At(this.bytes, this.offset + 8);
  }
}

/** A page of the track orders packed by pageTrackOrder: per row int4 level, float8 acc, int8 first reached, int8 uid. */
export class TrackPage extends PackedRows {
  constructor(chunks: Buffer[]) {
    super(chunks, 28);
  }
  levelId(i: number): number {
    this.seek(i);
    return this.bytes.readInt32BE(this.offset);
  }
  acc(i: number): number {
    this.seek(i);
    return this.bytes.readDoubleBE(this.offset + 4);
  }
  firstTimeMs(i: number): number {
    this.seek(i);
    return int8At(this.bytes, this.offset + 12);
  }
  uid(i: number): number {
    this.seek(i);
    return int8At(this.bytes, this.offset + 20);
  }
  /** Row i as an object (the last row of a page: where the next one starts). */
  row(i: number): TrackOrderRow {
    return { levelId: this.levelId(i), acc: this.acc(i), firstTimeMs: this.firstTimeMs(i), uid: this.uid(i) };
  }
}
