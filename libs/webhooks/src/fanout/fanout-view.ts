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

/** Whose a delivery is: the endpoint it goes to and that endpoint's account. */
export interface DeliveryOwner {
  readonly endpointId: string;
  readonly accountId: string;
}

/**
 * The endpoints and switches, in memory (loaded from disk at start, saved with the checkpoint):
 * one row per endpoint and account, whatever the traffic. Deliveries are not here: which are
 * open lives on disk only (OpenDeliveries), so memory does not grow with the backlog.
 */
export class MemoryFanOutView implements FanOutView {
  readonly endpoints = new Map<string, ViewEndpoint>();
  readonly switches = new Map<string, boolean>();
  private readonly byAccount = new Map<string, Set<string>>();

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
}
