/** Shared output format of the benchmarks: figure, baseline, ratio. */
export function rate(count: number, ms: number): number {
  return count / (ms / 1000);
}

export function printComparison(
  label: string,
  figure: number,
  baselineLabel: string,
  baseline: number,
  unit: string,
): void {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`${label.padEnd(58)} ${fmt(figure).padStart(10)} ${unit}`);
  console.log(`${baselineLabel.padEnd(58)} ${fmt(baseline).padStart(10)} ${unit}`);
  console.log(`${'ratio (figure / baseline)'.padEnd(58)} ${(figure / baseline).toFixed(2).padStart(10)}`);
}

/**
 * The benchmarks measure what the service can serve, not one account's budget: the per-account
 * limit stays on (its guard's cost is in the figures) at a rate no run reaches.
 */
export const UNREACHABLE_RATE_LIMIT = '1000000/1s';
