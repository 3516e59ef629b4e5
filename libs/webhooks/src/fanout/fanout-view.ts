import { selectionIncludes } from '../catalog/event-types';

/**
 * The fan-out's own picture of endpoints and account switches, built from the stream in order,
 * so "was this endpoint enabled for this event?" is answered at the event's position. Pure.
 */
export interface ViewEndpoint {
  readonly id: string;
  readonly accountId: string;
  readonly enabled: boolean;
  readonly deleted: boolean;
  readonly eventTypes: readonly string[];
}

export interface FanOutView {
  endpoint(id: string): ViewEndpoint | undefined;
  endpointsOf(accountId: string): readonly ViewEndpoint[];
  switchOn(accountId: string): boolean;
}

/** The endpoints an event goes to: switch on, endpoint enabled, type selected (empty = all). */
export function recipients(view: FanOutView, accountId: string, eventType: string): ViewEndpoint[] {
  if (!view.switchOn(accountId)) return [];
  return view
    .endpointsOf(accountId)
    .filter((e) => e.enabled && !e.deleted && selectionIncludes(e.eventTypes, eventType));
}

/**
 * Whose a delivery is: one record per endpoint, shared by all its deliveries, so a pending
 * delivery costs the view its id and one map entry, not copies of the endpoint and account ids.
 */
export interface DeliveryOwner {
  readonly endpointId: string;
  readonly accountId: string;
}

/**
 * An in-memory view (loaded from disk at start, saved with the checkpoint). Of deliveries it holds
 * only the open ones (pending at the fan-out's position): a closed delivery leaves it, its row
 * stays on disk, so the view is bounded by what is pending, not by every delivery ever made.
 */
export class MemoryFanOutView implements FanOutView {
  readonly endpoints = new Map<string, ViewEndpoint>();
  readonly switches = new Map<string, boolean>();
  private readonly byAccount = new Map<string, Set<string>>();
  /** Open delivery id → its owner, in the order they opened. */
  private readonly open = new Map<string, DeliveryOwner>();
  /** Endpoint id → its owner record. */
  private readonly owners = new Map<string, DeliveryOwner>();

  endpoint(id: string): ViewEndpoint | undefined {
    return this.endpoints.get(id);
  }

  endpointsOf(accountId: string): ViewEndpoint[] {
    return [...(this.byAccount.get(accountId) ?? [])].map((id) => this.endpoints.get(id)!);
  }

  switchOn(accountId: string): boolean {
    return this.switches.get(accountId) ?? false;
  }

  putEndpoint(e: ViewEndpoint): void {
    this.endpoints.set(e.id, e);
    let ids = this.byAccount.get(e.accountId);
    if (!ids) this.byAccount.set(e.accountId, (ids = new Set()));
    ids.add(e.id);
  }

  putSwitch(accountId: string, on: boolean): void {
    this.switches.set(accountId, on);
  }

  /** The shared owner record of an endpoint's deliveries. */
  owner(endpointId: string, accountId: string): DeliveryOwner {
    let owner = this.owners.get(endpointId);
    if (owner?.accountId !== accountId) this.owners.set(endpointId, (owner = { endpointId, accountId }));
    return owner;
  }

  /** The owner of a delivery open at the view's position; undefined when closed or unknown. */
  openOwner(deliveryId: string): DeliveryOwner | undefined {
    return this.open.get(deliveryId);
  }

  openDelivery(deliveryId: string, owner: DeliveryOwner): void {
    this.open.set(deliveryId, owner);
  }

  /** Forgets a delivery that is no longer pending; returns its owner if it was open. */
  closeDelivery(deliveryId: string): DeliveryOwner | undefined {
    const owner = this.open.get(deliveryId);
    this.open.delete(deliveryId);
    return owner;
  }

  get openCount(): number {
    return this.open.size;
  }

  /**
   * Deliveries pending at the view's position, of one endpoint or of every endpoint of an account
   * (endpoint by endpoint, each in the order they opened). One pass over what is open: only a
   * disable or a switch-off asks.
   */
  openDeliveries(scope: { readonly endpointId: string } | { readonly accountId: string }): string[] {
    const endpoints = 'endpointId' in scope ? [scope.endpointId] : [...(this.byAccount.get(scope.accountId) ?? [])];
    const found = new Map(endpoints.map((id) => [id, [] as string[]]));
    for (const [id, owner] of this.open) found.get(owner.endpointId)?.push(id);
    return [...found.values()].flat();
  }
}
