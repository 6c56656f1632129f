/**
 * The fixed-point unit of ratings as they are ranked and shown: ATP and play ratings in
 * ten-thousandths (exact integers, so orderings never compare binary fractions). The rating
 * arithmetic (upload/rating.ts, decisions.md §5) writes them; the rank keys and boards read them.
 */

/** ATP and the answered play rating carry this many decimals. */
export const RATING_DECIMALS = 4;

const SCALE = 10 ** RATING_DECIMALS;

/**
 * `value` in ten-thousandths, rounded half up. The product is first cut to 12 significant digits
 * so that binary noise does not decide the rounding (1.00005 × 10⁴ is 10000.499999999998 in
 * binary; it rounds to 10001 as the decimal reading says).
 */
export function toTenThousandths(value: number): number {
  return Math.round(Number((value * SCALE).toPrecision(12)));
}

/** `value` rounded half up to 4 decimals. */
export function roundRating(value: number): number {
  return toTenThousandths(value) / SCALE;
}
