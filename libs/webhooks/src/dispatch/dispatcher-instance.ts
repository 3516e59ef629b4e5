import { randomUUID } from 'node:crypto';

/**
 * How long past WEBHOOK_TIMEOUT_MS a claim holds: room for signing, recording the attempt and a
 * loaded event loop. Short, because it is how long a dead instance's in-flight attempts wait for
 * another instance (the default 10 s timeout gives a 15 s lease).
 */
export const CLAIM_LEASE_MARGIN_MS = 5_000;

export function claimLeaseMs(webhookTimeoutMs: number): number {
  return webhookTimeoutMs + CLAIM_LEASE_MARGIN_MS;
}

/**
 * This process's name on its delivery claims: random per start, so a restarted instance never
 * mistakes a claim of its former self for one it holds in memory.
 */
export class DispatcherInstance {
  readonly id = randomUUID();
}
