/**
 * The play rating and ATP of decisions.md §5, as pure functions (the upload path and the admin
 * recompute share them, so both always agree).
 */
import { RATING_DECIMALS, toTenThousandths } from '../ranking/rating-scale';

/** ATP averages the best ratings of this many charts. */
export const ATP_CHART_COUNT = 30;

/**
 * Rating of one counted (pass: true) play with accuracy `acc` (0–100) on a chart of constant `constant`:
 * acc ≥ 100: C + 2; 98 ≤ acc < 100: C + 1 + (acc − 98)/2; 95 ≤ acc < 98: C + (acc − 95)/3;
 * acc < 95: max(0, C − (95 − acc)/5). A placeholder chart has C = 0.
 */
export function playRating(constant: number, acc: number): number {
  if (acc >= 100) return constant + 2;
  if (acc >= 98) return constant + 1 + (acc - 98) / 2;
  if (acc >= 95) return constant + (acc - 95) / 3;
  return Math.max(0, constant - (95 - acc) / 5);
}

/**
 * ATP in ten-thousandths (an exact integer, so orderings never compare binary fractions): the
 * sum of the 30 highest per-chart best ratings, divided by 30, rounded to 4 decimals. The ratings
 * are summed from the highest down, so the same set always gives the same sum.
 */
export function atpTenThousandths(bestRatings: readonly number[]): number {
  const top = [...bestRatings].sort((a, b) => b - a).slice(0, ATP_CHART_COUNT);
  const sum = top.reduce((total, rating) => total + rating, 0);
  return toTenThousandths(sum / ATP_CHART_COUNT);
}

/** ATP as answered on the wire (4 decimals). */
export function atpOf(bestRatings: readonly number[]): number {
  return atpTenThousandths(bestRatings) / 10 ** RATING_DECIMALS;
}
