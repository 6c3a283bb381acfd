/**
 * The error catalogue of resource manager (spec: resource-manager §7), rendered as ARM `ErrorResponse`.
 * Raise with `errors.arm.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `arm` family. */
export const arm = defineErrors('arm', {
  invalidBody: { status: 400, code: 'InvalidRequestContent', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
});
