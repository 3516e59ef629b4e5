/*
 * `{ ...base, key: value }` as a function. In the V8 of Node 20 an object literal that starts
 * with a spread and goes on with properties makes a new hidden class (a Map, with a copy of its
 * descriptors) for every property after the spread, on every call, unless its spread site has
 * seen many shapes: ~1 µs per call instead of ~0.1, old-generation garbage, and every inline
 * cache that meets the result turns megamorphic (docs/contributing.md, "Object shapes"; the lint
 * rule against `{ ...x, key }` points here). Object.assign onto a fresh object copies the same own
 * enumerable properties in the same order, and its shapes are shared between calls. One
 * difference: an own `__proto__` key (JSON.parse makes one) sets the copy's prototype instead of
 * becoming a property. None reaches here: Fastify refuses a body that has one, and the service
 * builds the top level of every object it extends.
 */

/** A new object: `base`'s own enumerable properties, then `extra`'s, later ones replacing earlier ones. */
export function extend<A extends object, const B extends object>(base: A, extra: B): Omit<A, keyof B> & B;
export function extend<A extends object, const B extends object, const C extends object>(
  base: A,
  extra: B,
  more: C,
): Omit<Omit<A, keyof B> & B, keyof C> & C;
export function extend(base: object, ...extras: object[]): object {
  return Object.assign({}, base, ...extras) as object;
}
