/**
 * The error catalogue of mail (spec: analytics §4.3, §6, §7), rendered as the mail error (`error.code`, `error.message`, `innerError`).
 * Raise with `errors.mail.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `mail` family. */
export const mail = defineErrors('mail', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'BadRequest', message: '{message}', when: 'No route matches the path.' },
});
