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

/** A delivery as the stream says at the fan-out's position: open = pending there. */
export interface ViewDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly accountId: string;
  readonly open: boolean;
}

/** An in-memory view (loaded from disk at start, saved with the checkpoint). */
export class MemoryFanOutView implements FanOutView {
  readonly endpoints = new Map<string, ViewEndpoint>();
  readonly switches = new Map<string, boolean>();
  readonly deliveries = new Map<string, ViewDelivery>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly openByEndpoint = new Map<string, Set<string>>();

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

  putDelivery(d: ViewDelivery): void {
    this.deliveries.set(d.id, d);
    let open = this.openByEndpoint.get(d.endpointId);
    if (!open) this.openByEndpoint.set(d.endpointId, (open = new Set()));
    if (d.open) open.add(d.id);
    else open.delete(d.id);
  }

  /** Deliveries pending at the view's position, of one endpoint or of every endpoint of an account. */
  openDeliveries(scope: { readonly endpointId: string } | { readonly accountId: string }): string[] {
    const endpoints = 'endpointId' in scope ? [scope.endpointId] : [...(this.byAccount.get(scope.accountId) ?? [])];
    return endpoints.flatMap((id) => [...(this.openByEndpoint.get(id) ?? [])]);
  }
}
