/**
 * A queue with a capacity, between a subscription (the producer) and a processor's handler (the
 * consumer): `put` waits while it is full, so a slow handler pushes back on reading instead of
 * letting batches pile up in memory. After `close`, `put` refuses and `take` drains what is left.
 */
export class BoundedQueue<T> {
  private items: T[] = [];
  private closed = false;
  private readonly spaceWaiters: Array<() => void> = [];
  private itemWaiter: (() => void) | null = null;

  constructor(private readonly capacity: number) {}

  /** Adds at once when there is room (no promise: a catch-up puts every event); false when full or closed. */
  offer(item: T): boolean {
    if (this.closed || this.items.length >= this.capacity) return false;
    this.items.push(item);
    this.wakeTaker();
    return true;
  }

  /** False once the queue is closed (the item is dropped). */
  async put(item: T): Promise<boolean> {
    while (!this.closed && this.items.length >= this.capacity) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    if (this.closed) return false;
    this.items.push(item);
    this.wakeTaker();
    return true;
  }

  /**
   * Waits for at least one item, lets the producer add what is already on its way (one turn of
   * the event loop: a catch-up page or a group commit arrives together), then takes up to `max`.
   * Null once closed and empty.
   */
  async take(max: number): Promise<T[] | null> {
    if (this.items.length === 0 && !this.closed) {
      await new Promise<void>((resolve) => (this.itemWaiter = resolve));
      if (!this.closed) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.items.length === 0) return null;
    const batch = this.items.splice(0, max);
    for (const wake of this.spaceWaiters.splice(0)) wake();
    return batch;
  }

  close(): void {
    this.closed = true;
    this.wakeTaker();
    for (const wake of this.spaceWaiters.splice(0)) wake();
  }

  private wakeTaker(): void {
    const wake = this.itemWaiter;
    this.itemWaiter = null;
    wake?.();
  }
}

/** Reads the subscription into the queue (waiting while it is full) until either ends; the read failure, if any. */
export async function pump<T>(
  subscription: AsyncIterable<T>,
  queue: BoundedQueue<T>,
): Promise<{ error: unknown } | null> {
  try {
    for await (const message of subscription) {
      if (!queue.offer(message) && !(await queue.put(message))) break;
    }
    return null;
  } catch (error) {
    return { error };
  } finally {
    queue.close();
  }
}
