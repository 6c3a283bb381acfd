/**
 * The error catalogue of data share (spec: resource-manager §4.5, §7), rendered as `DataShareError`.
 * Raise with `errors.datashare.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `datashare` family. */
export const datashare = defineErrors('datashare', {
  invalidBody: { status: 400, code: 'InvalidRequestContent', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
});
