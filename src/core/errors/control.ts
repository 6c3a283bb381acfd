/**
 * The error catalogue of Stratus's control plane (ours), rendered as RFC 9457 problem+json.
 * Raise with `errors.control.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `control` family. */
export const control = defineErrors('control', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
});
