/**
 * Interleaves per-endpoint queues, up to `free` items: the first of every queue, then the
 * second of every queue, and so on. With slots for only part of the work, every endpoint listed
 * gets a turn before any gets a second, so a long queue never holds up a short one.
 */
export function roundRobin<T>(queues: ReadonlyArray<readonly T[]>, free: number): T[] {
  const picked: T[] = [];
  for (let depth = 0; picked.length < free; depth++) {
    const row = queues.filter((q) => depth < q.length).map((q) => q[depth]);
    if (row.length === 0) break;
    picked.push(...row.slice(0, free - picked.length));
  }
  return picked;
}

/**
 * The per-endpoint queues as one queue per account (its endpoints' interleaved, in their order),
 * accounts in the order they first appear: `roundRobin` over these gives every account a turn
 * before any gets a second, so an account with sixteen busy endpoints takes one slot per round
 * beside an account with one, not sixteen.
 */
export function byAccount<T>(
  queues: ReadonlyArray<{ readonly endpointId: string; readonly items: readonly T[] }>,
  accountOf: (endpointId: string) => string | undefined,
): T[][] {
  const accounts = new Map<string, Array<readonly T[]>>();
  for (const { endpointId, items } of queues) {
    // An endpoint the read model has not shown yet counts as an account of its own.
    const account = accountOf(endpointId) ?? `endpoint:${endpointId}`;
    let ofAccount = accounts.get(account);
    if (!ofAccount) accounts.set(account, (ofAccount = []));
    ofAccount.push(items);
  }
  return [...accounts.values()].map((ofAccount) => roundRobin(ofAccount, Infinity));
}
