/**
 * (Used by test/faults.test.ts; the compute and authorization tests use STRATUS_PROVIDER_NAMESPACE_ALIASES instead.)
 * The one pipeline policy that maps the official resource-manager clients' provider
 * namespace (`/providers/<Brand>.Compute/…`) onto Stratus's `Vendor.` namespace; the
 * README shows the same policy.
 */

/** Rewrites every `/providers/<Prefix>.<Service>` path segment of a request URL to `/providers/Vendor.<Service>`. */
export const vendorNamespacePolicy = {
  name: 'vendorNamespacePolicy',
  async sendRequest(request: { url: string }, next: (r: any) => Promise<any>) {
    request.url = request.url.replace(/\/providers\/[A-Za-z]+\.(?=[A-Za-z]+\/)/g, '/providers/Vendor.');
    return next(request);
  },
};
