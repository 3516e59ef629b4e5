import { randomUUID } from 'node:crypto';

/**
 * How long past WEBHOOK_TIMEOUT_MS a claim holds: room for signing, recording the attempt and a
 * loaded event loop. Short, because it is how long a dead instance's in-flight attempts wait for
 * another instance (the default 10 s timeout gives a 15 s lease).
 */
export const CLAIM_LEASE_MARGIN_MS = 5_000;

/**
 * How long a request handed to the sender thread may wait in its endpoint's lane (SendLanes)
 * before it is dropped unsent: the wait and the request (at most WEBHOOK_TIMEOUT_MS) stay within
 * the claim's lease, with half the margin left for signing and recording.
 */
export const QUEUED_REQUEST_MAX_WAIT_MS = CLAIM_LEASE_MARGIN_MS / 2;

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
