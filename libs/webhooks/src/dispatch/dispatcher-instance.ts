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
 * The latest time a claimed attempt's POST may leave (epoch ms): the request, if it runs to its
 * timeout, must end `clockSkewMs` before the lease ends as the other instances see it (by their
 * clocks, which may be that far ahead of this one's). Past it the attempt is given up, not sent:
 * another instance may claim the delivery once the lease is over, and sending too would send it
 * twice. The lease is counted from before the claim append, so the time that append took (a
 * leader election) is already gone from it when the acknowledgement arrives.
 */
export function claimSendBy(leaseUntil: number, webhookTimeoutMs: number, clockSkewMs: number): number {
  return leaseUntil - webhookTimeoutMs - clockSkewMs;
}

/**
 * This process's name on its delivery claims: random per start, so a restarted instance never
 * mistakes a claim of its former self for one it holds in memory.
 */
export class DispatcherInstance {
  readonly id = randomUUID();
}
