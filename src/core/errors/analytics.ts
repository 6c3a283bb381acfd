/**
 * The error catalogue of analytics admin (spec: analytics §4.1, §7), rendered as the analytics error body.
 * Raise with `errors.analytics.<name>(params, options)`; see `catalogue.ts`. Its throttling
 * answer (429) is a bare message, not an error body (reference §1.4), and is not here.
 */
import { defineErrors } from './catalogue.ts';
import { sharedEntries } from './common.ts';

/** Errors of the `analytics` family. */
export const analytics = defineErrors('analytics', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
  ...sharedEntries('analytics'),
  tokenExpired: { status: 401, code: 'TokenExpired', message: 'Access token has expired, resubmit with a new access token', when: 'The bearer token has expired (with a `WWW-Authenticate` challenge).' },
  notAuthorized: {
    status: 401,
    code: 'AnalyticsNotAuthorizedException',
    message: '{message}',
    when: 'No usable token, or a caller who is neither a tenant administrator with an admin scope nor a service principal without analytics permissions (reference §1.5).',
  },
  queryOptionNotOnce: { status: 400, code: 'BadRequest', message: "The query parameter '{name}' must be given once.", when: 'A system query option is given more than once (in any spelling).' },
  countNegative: { status: 400, code: 'BadRequest', message: "Invalid value '{value}' for query parameter '{name}': it must not be negative.", when: '`$top` or `$skip` is negative.' },
  countNotInteger: { status: 400, code: 'BadRequest', message: "Invalid value '{value}' for query parameter '{name}': expected a non-negative integer.", when: '`$top` or `$skip` is not an integer.' },
  countTooLarge: { status: 400, code: 'BadRequest', message: "Invalid value '{value}' for query parameter '{name}': it exceeds the 32-bit integer range.", when: '`$top` or `$skip` passes 2^31 − 1.' },
  invalidFilter: { status: 400, code: 'BadRequest', message: "Invalid $filter '{filter}': {reason}", when: '`$filter` does not parse, names an unknown property or function, mismatches types, or nests too deeply.' },
});
