/**
 * A pipeline policy that maps the official resource-manager clients' provider namespace
 * (`/providers/<Brand>.Compute/…`) onto Stratus's `Vendor.` namespace on the client side.
 * Users set STRATUS_PROVIDER_NAMESPACE_ALIASES instead (as compat-arm, compute and
 * authorization tests do); test/faults.test.ts still uses this.
 */

/** Rewrites every `/providers/<Prefix>.<Service>` path segment of a request URL to `/providers/Vendor.<Service>`. */
export const vendorNamespacePolicy = {
  name: 'vendorNamespacePolicy',
  async sendRequest(request: { url: string }, next: (r: any) => Promise<any>) {
    request.url = request.url.replace(/\/providers\/[A-Za-z]+\.(?=[A-Za-z]+\/)/g, '/providers/Vendor.');
    return next(request);
  },
};
