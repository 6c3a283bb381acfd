/**
 * The error catalogue of analytics admin (spec: analytics §4.1, §7), rendered as the analytics error body.
 * Raise with `errors.analytics.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `analytics` family. */
export const analytics = defineErrors('analytics', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
});
