/** Shared output format of the benchmarks: figure, baseline, ratio. */
export function rate(count: number, ms: number): number {
  return count / (ms / 1000);
}

export function printComparison(label: string, figure: number, baselineLabel: string, baseline: number, unit: string): void {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`${label.padEnd(58)} ${fmt(figure).padStart(10)} ${unit}`);
  console.log(`${baselineLabel.padEnd(58)} ${fmt(baseline).padStart(10)} ${unit}`);
  console.log(`${'ratio (figure / baseline)'.padEnd(58)} ${(figure / baseline).toFixed(2).padStart(10)}`);
}
