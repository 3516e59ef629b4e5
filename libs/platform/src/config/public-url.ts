/**
 * `PUBLIC_URL`: the origin clients reach the service at, for absolute URLs the service publishes
 * (RFC 8414 discovery metadata). An http(s) origin with no path, query, fragment or credentials,
 * kept without a trailing slash; unset: null. Throws a message without the variable's name.
 */
export function parsePublicUrl(value: string | undefined): string | null {
  if (value === undefined) return null;
  let url: URL | null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  const origin =
    url !== null &&
    ['http:', 'https:'].includes(url.protocol) &&
    !url.username &&
    !url.password &&
    url.pathname === '/' &&
    !url.search &&
    !url.hash &&
    !/[?#]$/.test(value);
  if (!url || !origin) {
    throw new Error(
      `must be the origin clients use, like https://api.example.com (http or https, no path, query or credentials; got ${JSON.stringify(value)})`,
    );
  }
  return url.origin;
}
