/**
 * Fault tests measure how long recovery took (docs/operations.md "Faults and recovery, measured")
 * but never assert on it. With RHYTHMC_FAULT_TIMINGS=1 they print what they measured.
 */
export function reportFaultTiming(what: string, ms: number): void {
  if (process.env.RHYTHMC_FAULT_TIMINGS === '1') process.stderr.write(`fault timing: ${what}: ${ms} ms\n`);
}
