/** Due delivery ids read per endpoint at once: the dispatcher hands them out over many pumps. */
export const DUE_WINDOW = 128;

interface Window {
  /** Longest due first, as the queue listed them; taken ones and changed ones removed. */
  readonly ids: Set<string>;
  /** The generation in which the read listed every due id of the endpoint (-1: it was cut at its limit). */
  readonly completeIn: number;
}

/**
 * Per endpoint, the next due deliveries as one queue read listed them (a window), so the
 * dispatcher reads the queue once per DUE_WINDOW attempts instead of once per pump. A window
 * only ever holds ids whose row is unchanged since the read: the deliveries projection reports
 * every event of a delivery (`changed`), which drops its id (claimed by another instance,
 * attempted, cancelled, rescheduled), and a taken id leaves it. What the read could not see
 * (work added since, a retry come due, a lease run out) sorts after the window or is found when
 * it is read again: when it runs short, or, for one that listed everything, once `renew` says
 * new work may have come (the delivery signal, a retry time passing, the tick). An id that is
 * stale anyway costs one pipeline look, which decides again from the delivery's own state.
 */
export class DueWindows {
  private readonly windows = new Map<string, Window>();
  /** Delivery id → the endpoint whose window holds it. */
  private readonly endpointOf = new Map<string, string>();
  /** Ids in a window that are a replay's: sent after the live ones (issue 50). */
  private readonly replays = new Set<string>();
  private generation = 0;

  /**
   * The endpoint's window if it can answer for `wanted` ids: it holds that many, or it held
   * every due id and nothing may have come since. undefined: read the queue (and `fill`).
   */
  get(endpointId: string, wanted: number): ReadonlySet<string> | undefined {
    const window = this.windows.get(endpointId);
    if (window === undefined) return undefined;
    if (window.ids.size >= wanted || window.completeIn === this.generation) return window.ids;
    return undefined;
  }

  /** A fresh read of the endpoint's due ids (longest due first); `complete`: nothing was cut off. */
  fill(
    endpointId: string,
    ids: readonly string[],
    complete: boolean,
    replays: readonly string[] = [],
  ): ReadonlySet<string> {
    this.drop(endpointId);
    const window: Window = { ids: new Set(ids), completeIn: complete ? this.generation : -1 };
    for (const id of ids) this.endpointOf.set(id, endpointId);
    for (const id of replays) this.replays.add(id);
    this.windows.set(endpointId, window);
    return window.ids;
  }

  /** The id was picked (or its row changed): it leaves its window. */
  take(deliveryId: string): void {
    const endpointId = this.endpointOf.get(deliveryId);
    if (endpointId === undefined) return;
    this.endpointOf.delete(deliveryId);
    this.replays.delete(deliveryId);
    this.windows.get(endpointId)?.ids.delete(deliveryId);
  }

  /** Whether a windowed id is a replay's. */
  isReplay(deliveryId: string): boolean {
    return this.replays.has(deliveryId);
  }

  /** An event of the delivery was applied to the read model: its row is not what the window read. */
  changed(deliveryId: string): void {
    this.take(deliveryId);
  }

  /**
   * A delivery scheduled (due now) since the windows were read: added last to its endpoint's
   * window if that listed every due one, so it stays a complete list without a read (a fresh read
   * would order it by due time, usually last too); otherwise it is read with the rest when that
   * window runs short.
   */
  scheduled(deliveryId: string, endpointId: string, replay = false): void {
    const window = this.windows.get(endpointId);
    if (window === undefined) return;
    if (!replay && window.completeIn !== this.generation) {
      // A live one must not wait behind a window of a replay's: the next read lists it first.
      if ([...window.ids].some((id) => this.replays.has(id))) this.drop(endpointId);
      return;
    }
    if (window.completeIn !== this.generation) return;
    this.endpointOf.set(deliveryId, endpointId);
    if (replay) {
      this.replays.add(deliveryId);
      window.ids.add(deliveryId);
    } else {
      // Before the replay's ones: live deliveries keep priority.
      const ids = [...window.ids];
      const at = ids.findIndex((id) => this.replays.has(id));
      if (at < 0) window.ids.add(deliveryId);
      else
        this.windows.set(endpointId, {
          ids: new Set([...ids.slice(0, at), deliveryId, ...ids.slice(at)]),
          completeIn: window.completeIn,
        });
    }
  }

  /** Due work may have come that no window lists: complete windows are read again when they run short. */
  renew(): void {
    this.generation++;
  }

  /** The endpoint's due work may have changed in a way no event reports (an attempt left it due). */
  renewOf(endpointId: string): void {
    const window = this.windows.get(endpointId);
    if (window !== undefined && window.completeIn !== -1) {
      this.windows.set(endpointId, { ids: window.ids, completeIn: -1 });
    }
  }

  /** Forgets every window (the tick: what only a fresh read sees, such as a lease run out, in its order). */
  clear(): void {
    this.windows.clear();
    this.endpointOf.clear();
    this.replays.clear();
    this.generation++;
  }

  private drop(endpointId: string): void {
    const window = this.windows.get(endpointId);
    if (window === undefined) return;
    for (const id of window.ids) {
      this.endpointOf.delete(id);
      this.replays.delete(id);
    }
    this.windows.delete(endpointId);
  }
}
