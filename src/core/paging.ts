/**
 * Next links and continuation tokens (design: "Storage" — keyset paging wherever the API
 * lets the server choose). Tokens are opaque base64url JSON; a token that does not decode
 * is the caller's error, reported by the family that reads it.
 */

/**
 * An absolute URL on the public origin: `origin` + `path` with `query` (undefined values
 * dropped, order kept). Used for `nextLink`, `@odata.nextLink` and `Location`.
 */
export function absoluteUrl(origin: string, path: string, query: Record<string, string | number | boolean | undefined> = {}): string {
  const u = new URL(path, origin + '/');
  // One serialization of the query (setting each parameter on `u.searchParams` serialized it anew
  // every time: a mail page's next link with five options, 2 % of its CPU, issue 31). Parameters
  // already in `path` are kept, as `searchParams.set` kept them.
  const params = new URLSearchParams(u.search);
  let any = false;
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    params.set(k, String(v));
    any = true;
  }
  if (any) u.search = params.toString();
  return u.toString().replace(/\+/g, '%20');
}

/** Encodes a continuation state as an opaque token. */
export function encodeToken(state: unknown): string {
  return Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
}

/** Decodes a token made by {@link encodeToken}; undefined when it does not decode to an object. */
export function decodeToken<T extends object>(token: string): T | undefined {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return v && typeof v === 'object' ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}
