/**
 * The error catalogue of the data platform (spec: analytics §4.2, §7), rendered as platform `ErrorResponse`.
 * Raise with `errors.platform.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `platform` family. */
export const platform = defineErrors('platform', {
  invalidBody: { status: 400, code: 'InvalidInput', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'EntityNotFound', message: '{message}', when: 'No route matches the path.' },
});
