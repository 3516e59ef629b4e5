/**
 * A bench server's own event-loop delay, measured inside its process and read by the bench over
 * IPC: `{eld: 'start'}` / `{eld: 'pause'}` bracket each measured round, `{eld: 'read'}` answers
 * `{p50, p99, max}` in ms over the rounds: the median round's p50, the worst round's p99. (A
 * fresh monitor per round: a re-enabled one counts the idle pause as one long delay, and an
 * ELD histogram cannot be merged into another.) With it, `cpuMicros`: the process's CPU time
 * (every thread, user + system) summed over the rounds, the figure that holds when other work
 * shares the machine and throughput does not.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly cpuMicros: number;
}

export function serveEventLoopDelay(): void {
  const rounds: Array<Omit<EventLoopDelay, 'cpuMicros'>> = [];
  let current: ReturnType<typeof monitorEventLoopDelay> | null = null;
  let cpuSince: NodeJS.CpuUsage | null = null;
  let cpuMicros = 0;
  const ms = (ns: number) => ns / 1e6;
  process.on('message', (message: { eld?: string }) => {
    if (message.eld === 'start') {
      current = monitorEventLoopDelay({ resolution: 1 });
      current.enable();
      cpuSince = process.cpuUsage();
    }
    if (message.eld === 'pause' && current) {
      const cpu = process.cpuUsage(cpuSince ?? undefined);
      cpuMicros += cpu.user + cpu.system;
      current.disable();
      rounds.push({ p50: ms(current.percentile(50)), p99: ms(current.percentile(99)), max: ms(current.max) });
      current = null;
    }
    if (message.eld === 'read') {
      const p50s = rounds.map((r) => r.p50).sort((a, b) => a - b);
      process.send?.({
        p50: p50s[Math.floor(p50s.length / 2)] ?? 0,
        p99: Math.max(0, ...rounds.map((r) => r.p99)),
        max: Math.max(0, ...rounds.map((r) => r.max)),
        cpuMicros,
      } satisfies EventLoopDelay);
    }
  });
}
