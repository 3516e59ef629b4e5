import { comparePositions, type Position } from '@filing/event-store';

/**
 * One endpoint's dispatch state on this instance, in one place: its sending slots, its claimed
 * deliveries (in flight from the claim until the attempt is recorded), and those attempted whose
 * outcome the read model does not show yet (settling). Its pacing (rate limit, a 429's pause) is
 * the EndpointPacer's entry for it, its window of due ids DueWindows'.
 */
export interface EndpointState {
  /** Claimed and not yet answered: sending, or waiting in its lane on the sender thread. */
  launched: number;
  /** Claimed here, until the attempt is recorded. */
  readonly inFlight: Set<string>;
  /** Attempted: the position the read model must reach before the row is trusted again. */
  readonly settling: Map<string, Position>;
}

/** Every endpoint's EndpointState; an endpoint with nothing launched, in flight or settling has none. */
export class EndpointStates {
  private readonly states = new Map<string, EndpointState>();

  of(endpointId: string): EndpointState {
    let state = this.states.get(endpointId);
    if (!state) this.states.set(endpointId, (state = { launched: 0, inFlight: new Set(), settling: new Map() }));
    return state;
  }

  launched(endpointId: string): number {
    return this.states.get(endpointId)?.launched ?? 0;
  }

  /** Ids held here (in flight or settling): the read model may still show them as due. */
  held(endpointId: string): number {
    const state = this.states.get(endpointId);
    return state ? state.inFlight.size + state.settling.size : 0;
  }

  /** Whether this instance holds the delivery (in flight or settling). */
  holds(endpointId: string, deliveryId: string): boolean {
    const state = this.states.get(endpointId);
    return state !== undefined && (state.inFlight.has(deliveryId) || state.settling.has(deliveryId));
  }

  /** Endpoints sending all they may (`limit` launched or more). */
  sendingAtLimit(limit: number): number {
    let n = 0;
    for (const state of this.states.values()) if (state.launched >= limit) n++;
    return n;
  }

  /** Settling deliveries the read model has reached (at `reached`) are trusted again. */
  pruneSettled(reached: Position | null): void {
    if (reached === null) return;
    for (const [endpointId, state] of this.states) {
      for (const [id, position] of state.settling) {
        if (comparePositions(reached, position) >= 0) state.settling.delete(id);
      }
      this.dropIfIdle(endpointId, state);
    }
  }

  dropIfIdle(endpointId: string, state = this.states.get(endpointId)): void {
    if (state && state.launched <= 0 && state.inFlight.size === 0 && state.settling.size === 0) {
      this.states.delete(endpointId);
    }
  }
}

/**
 * How long the dispatcher's timer waits before the next pump (ms), or null: nothing due within a
 * tick (the periodic tick will look). The earliest of the next retry time and the next opening
 * of a held-back endpoint; one ms late, so the pump finds it due. Pure.
 */
export function nextDelay(
  now: number,
  nextRetry: number | null,
  opening: number | null,
  tickMs: number,
): number | null {
  const times = [nextRetry, opening].filter((t): t is number => t !== null);
  if (times.length === 0) return null;
  const delay = Math.min(...times) - now;
  if (delay > tickMs) return null;
  return Math.max(0, delay) + 1;
}
