/**
 * A pipeline policy that maps the official resource-manager clients' provider namespace
 * (`/providers/<Brand>.Compute/…`) onto Stratus's `Vendor.` namespace on the client side.
 * Users set STRATUS_PROVIDER_NAMESPACE_ALIASES instead (as compat-arm, compute and
 * authorization tests do); test/faults.test.ts still uses this. Also {@link collect} (a paged
 * list's items) and {@link armFetch} (a raw JSON request with a token) for resource-manager tests.
 */

/** Rewrites every `/providers/<Prefix>.<Service>` path segment of a request URL to `/providers/Vendor.<Service>`. */
export const vendorNamespacePolicy = {
  name: 'vendorNamespacePolicy',
  async sendRequest(request: { url: string }, next: (r: any) => Promise<any>) {
    request.url = request.url.replace(/\/providers\/[A-Za-z]+\.(?=[A-Za-z]+\/)/g, '/providers/Vendor.');
    return next(request);
  },
};

/** Every item of an SDK client's paged list (follows its `nextLink`s). */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** A raw JSON request with a bearer token: `base` the server's origin, `path` from `/`; the body parsed when there is one. */
export async function armFetch(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
