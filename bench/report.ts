import type { ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';

/** Shared output format of the benchmarks: figure, baseline, ratio. */

/** A figure as printed: rounded, thousands separated. */
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

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
  console.log(`${label.padEnd(58)} ${fmt(figure).padStart(10)} ${unit}`);
  console.log(`${baselineLabel.padEnd(58)} ${fmt(baseline).padStart(10)} ${unit}`);
  console.log(`${'ratio (figure / baseline)'.padEnd(58)} ${(figure / baseline).toFixed(2).padStart(10)}`);
}

/** A further baseline under a `printComparison`, and the figure's ratio to it. */
export function printBaseline(label: string, baseline: number, figure: number, unit: string): void {
  console.log(`${label.padEnd(58)} ${fmt(baseline).padStart(10)} ${unit}`);
  console.log(`${'ratio (figure / this baseline)'.padEnd(58)} ${(figure / baseline).toFixed(2).padStart(10)}`);
}

/**
 * What a ratio line allows at the CPU a run spent, from its own figures: `cpuUsPerUnit` (every
 * thread and process the work needs) spread over every core with none idle, and that ceiling's
 * ratio to the baseline. A ceiling under the line's ratio means no overlap of threads reaches it:
 * only less CPU per unit does.
 */
export function printCpuCeiling(
  label: string,
  cpuUsPerUnit: number,
  baseline: { readonly name: string; readonly rate: number },
  unit: string,
): void {
  const ceiling = (cpus().length * 1_000_000) / cpuUsPerUnit;
  console.log(`${label.padEnd(58)} ${fmt(ceiling).padStart(10)} ${unit}`);
  console.log(
    `${`ratio (ceiling / ${baseline.name})`.padEnd(58)} ${(ceiling / baseline.rate).toFixed(2).padStart(10)}`,
  );
}

/**
 * The benchmarks measure what the service can serve, not one account's budget: the per-account
 * limit stays on (its guard's cost is in the figures) at a rate no run reaches.
 */
export const UNREACHABLE_RATE_LIMIT = '1000000/1s';

/**
 * In a bench server spawned with an IPC channel: answers each `'cpu'` message with the process's
 * CPU time so far (user + system, µs, every thread), so the bench can report CPU per request,
 * which a machine loaded by other work skews far less than throughput.
 */
export function answerCpuUsage(): void {
  if (!process.send) return;
  process.on('message', (message) => {
    if (message !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send!(user + system);
  });
}

/** A bench server's CPU time so far (µs), from its `answerCpuUsage`. */
export function cpuUsageOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('message', (micros) => resolve(micros as number));
    if (!child.send('cpu')) reject(new Error('The bench server has no IPC channel'));
  });
}
