import type { Position } from '@filing/event-store';
import type { AttemptHooks } from './dispatch-pipeline';
import type { DueWindows } from './due-windows';
import type { EndpointPacer } from './endpoint-pacer';
import type { EndpointState, EndpointStates } from './endpoint-states';

/** What of the dispatcher a launched delivery updates as its attempt goes. */
export interface LaunchHost {
  readonly pacer: EndpointPacer;
  readonly windows: DueWindows;
  readonly endpoints: EndpointStates;
  /** The request holds its sending slot no more: one less launched for the endpoint, and a pump. */
  readonly slotFreed: (state: EndpointState) => void;
  readonly schedulePump: () => void;
}

/**
 * One delivery launched by the dispatcher, from the claim to the end of its run: the pacing hooks
 * of its attempt, and what its outcome frees (its slot once, its pacer room if it never left, its
 * place in flight). Already counted in flight and in its endpoint's slots when made.
 */
export class LaunchedDelivery {
  private sent = false;
  private dropped = false;
  private slotHeld = true;

  constructor(
    private readonly deliveryId: string,
    private readonly endpointId: string,
    private readonly state: EndpointState,
    private readonly host: LaunchHost,
  ) {}

  /** The pipeline's hooks for this attempt (AttemptHooks). */
  hooks(): AttemptHooks {
    const { pacer } = this.host;
    const endpointId = this.endpointId;
    return {
      mayStart: () => !pacer.paused(endpointId, Date.now()),
      sending: () => {
        this.sent = true;
        pacer.sent(endpointId, Date.now());
      },
      pause: (ms) => pacer.pause(endpointId, Date.now(), ms),
      answered: () => this.freeSlot(),
      notSent: () => {
        this.sent = false;
        this.dropped = true;
      },
    };
  }

  /** The attempt is recorded: the row is trusted again once the read model reaches `position`. */
  recorded(position: Position | null): void {
    if (position !== null) this.state.settling.set(this.deliveryId, position);
  }

  /** The run is over, however it ended. */
  ended(): void {
    const { pacer, windows, endpoints } = this.host;
    if (!this.sent) {
      // A request dropped from its lane was counted as sent already.
      if (!this.dropped) pacer.release(this.endpointId);
      // It may still be due (held back by a pause, its claim lost) and no window lists it.
      windows.renewOf(this.endpointId);
    }
    this.state.inFlight.delete(this.deliveryId);
    // A slot freed when the request was answered has already pumped, and moving from in
    // flight to settling frees nothing: pump again only if this frees a slot or pacer room.
    if (this.slotHeld) this.freeSlot();
    else if (!this.sent) this.host.schedulePump();
    endpoints.dropIfIdle(this.endpointId);
  }

  private freeSlot(): void {
    if (!this.slotHeld) return;
    this.slotHeld = false;
    this.host.slotFreed(this.state);
  }
}
