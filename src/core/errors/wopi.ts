/**
 * The error catalogue of the document host bootstrapper (spec: analytics §4.4), rendered as status codes and headers, no body.
 * Raise with `errors.wopi.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `wopi` family. */
export const wopi = defineErrors('wopi', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
});
