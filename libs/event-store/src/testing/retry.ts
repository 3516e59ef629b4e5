/** Retries `fn` until it resolves: for tests that must wait out a server restart. */
export async function retry<T>(fn: () => Promise<T>, attempts = 50, delayMs = 200): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}
