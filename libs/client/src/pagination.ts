import { FilingError } from './errors';
import type { Page } from './types';

/**
 * Every item of a collection, page after page, fetching the next page only when the previous
 * one is used up: `for await (const entity of client.entities.listAll({ status: 'active' }))`.
 * Breaking out of the loop stops fetching.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  firstCursor?: string,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined = firstCursor;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.data;
    if (page.next_cursor === null || page.next_cursor === undefined) return;
    // A server that hands out the same cursor twice would loop for ever: stop instead.
    if (seen.has(page.next_cursor))
      throw new FilingError('The service returned a cursor it had already returned; stopping pagination');
    seen.add(page.next_cursor);
    cursor = page.next_cursor;
  }
}

/** Every page (not item), for callers that process a page at a time. */
export async function* pages<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  firstCursor?: string,
): AsyncGenerator<Page<T>, void, undefined> {
  let cursor: string | undefined = firstCursor;
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
  }
}

/** Drains an async iterable into an array (handy in scripts and tests; mind the memory). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
