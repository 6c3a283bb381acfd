/**
 * The error catalogue of the identity provider (spec: resource-manager §5), rendered as OAuth 2.0 error JSON (RFC 6749 §5.2).
 * Raise with `errors.oauth.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `oauth` family. */
export const oauth = defineErrors('oauth', {
  invalidBody: { status: 400, code: 'invalid_request', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'invalid_request', message: '{message}', when: 'No route matches the path.' },
});
