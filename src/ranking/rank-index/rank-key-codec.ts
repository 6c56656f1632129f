/**
 * Packs a rank key (three numbers, rank-index.ts RankKey) into three unsigned 32-bit words whose
 * lexicographic order is the key's order, and back, exactly. A key that does not fit (decode would
 * not give the same numbers back) is refused: the caller keeps it in a wide (Float64) set instead,
 * so no key is ever rounded into a wrong rank.
 */
export interface RankKeyCodec {
  /** Stable name, written into snapshots (a change of layout changes it). */
  readonly name: string;
  /** Writes the words of (a, b, c) into out[0..2]; false when the key does not fit. */
  encode(a: number, b: number, c: number, out: Uint32Array): boolean;
  /** The key of words (w0, w1, w2), as written by encode. */
  decode(w0: number, w1: number, w2: number): [number, number, number];
}

const TWO_32 = 2 ** 32;
const MAX_UID = TWO_32 - 1;

/** A uid in the third word: an integer 0 … 2^32 − 1 (larger ones go to the wide set). */
const fitsUid = (c: number) => Number.isInteger(c) && c >= 0 && c <= MAX_UID;

/** acc in ten-thousandths of a percent: 0 … 1,000,000 (20 bits). */
const ACC_E4_MAX = 1_000_000;
/** first_time_ms is stored as milliseconds after 2000-01-01T00:00:00Z in 44 bits (until year 2557). */
export const TIME_EPOCH_MS = Date.UTC(2000, 0, 1);
const TIME_BITS = 44;
const TIME_HIGH = 2 ** (TIME_BITS - 32);

/**
 * A chart's order (−acc, first reached, uid). acc is a double precision percentage (the upload
 * accepts any finite number 0–100): only an acc with at most four decimals that survives
 * `n / 10000 === acc` fits, which every client sending two-decimal percentages does.
 * w0 = (1,000,000 − acc·10⁴) · 2^12 + high 12 bits of the time offset; w1 = its low 32 bits; w2 = uid.
 */
export const CHART_KEY_CODEC: RankKeyCodec = {
  name: 'chart-acc-e4-time44-uid32',
  encode(a, b, c, out) {
    const acc = -a;
    const accE4 = Math.round(acc * 10_000);
    if (!(accE4 >= 0 && accE4 <= ACC_E4_MAX) || accE4 / 10_000 !== acc) return false;
    const offset = b - TIME_EPOCH_MS;
    if (!Number.isInteger(offset) || offset < 0 || offset >= 2 ** TIME_BITS || !fitsUid(c)) return false;
    const high = Math.floor(offset / TWO_32);
    out[0] = (ACC_E4_MAX - accE4) * TIME_HIGH + high;
    out[1] = offset - high * TWO_32;
    out[2] = c;
    return true;
  },
  decode(w0, w1, w2) {
    const accE4 = ACC_E4_MAX - Math.floor(w0 / TIME_HIGH);
    return [-(accE4 / 10_000), TIME_EPOCH_MS + (w0 % TIME_HIGH) * TWO_32 + w1, w2];
  },
};

/** ATP in ten-thousandths: numeric(10,4) holds below 10^10; 40 bits leave room. */
const ATP_E4_MAX = 2 ** 40 - 1;

/**
 * The site order (−ATP in ten-thousandths, 0, uid): w0·2^32 + w1 = 2^40 − 1 − ATP·10⁴, w2 = uid.
 */
export const SITE_KEY_CODEC: RankKeyCodec = {
  name: 'site-atp-e4-40-uid32',
  encode(a, b, c, out) {
    const atpE4 = -a;
    if (!Number.isInteger(atpE4) || atpE4 < 0 || atpE4 > ATP_E4_MAX || b !== 0 || !fitsUid(c)) return false;
    const inverted = ATP_E4_MAX - atpE4;
    const high = Math.floor(inverted / TWO_32);
    out[0] = high;
    out[1] = inverted - high * TWO_32;
    out[2] = c;
    return true;
  },
  decode(w0, w1, w2) {
    return [-(ATP_E4_MAX - (w0 * TWO_32 + w1)), 0, w2];
  },
};
