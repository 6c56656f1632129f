/**
 * The comparison mode of every benchmark: the service and a bare Express + pg handler doing the
 * equivalent queries are measured in the same run, alternating within each round, so that each
 * figure can be given as a ratio that holds on a noisy, shared machine.
 */
import { mean, median } from './load';

/**
 * Runs `measure` for every target in every round; odd rounds go in reverse order, so neither
 * target always runs first (warm caches, a neighbour's burst).
 */
export async function alternate<M>(
  names: readonly string[],
  rounds: number,
  measure: (name: string, round: number) => Promise<M>,
): Promise<Record<string, M[]>> {
  const results: Record<string, M[]> = Object.fromEntries(names.map((name) => [name, [] as M[]]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) results[name].push(await measure(name, round));
  }
  return results;
}

export interface Ratio {
  /** mean(numerator) / mean(denominator). */
  ofMeans: number;
  /** Per round: measured back to back, so the least disturbed by other load. */
  perRound: number[];
  median: number;
}

/** How `numerator` compares to `denominator`, per round and overall (e.g. service req/s ÷ bare req/s). */
export function ratio(numerator: number[], denominator: number[]): Ratio {
  const perRound = numerator.map((value, i) => value / denominator[i]);
  return { ofMeans: mean(numerator) / mean(denominator), perRound, median: median(perRound) };
}

export const percent = (value: number, digits = 1) => `${(value * 100).toFixed(digits)} %`;
