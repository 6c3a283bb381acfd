/**
 * The error catalogue of the document host bootstrapper (spec: analytics §4.4), rendered as status codes and headers, no body.
 * Raise with `errors.wopi.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';
import { sharedEntries } from './common.ts';

/** Errors of the `wopi` family. */
export const wopi = defineErrors('wopi', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
  ...sharedEntries('wopi'),
  unauthorized: { status: 401, code: 'Unauthorized', message: '{message}', when: 'The bootstrapper got no usable delegated token with `user_impersonation` (with the `WWW-Authenticate` challenge, reference §6.3).' },
  accessTokenMissing: { status: 401, code: 'Unauthorized', message: 'The access_token is missing.', when: 'A host request without `access_token`.' },
  accessTokenInvalid: { status: 401, code: 'Unauthorized', message: 'The access_token is invalid or expired.', when: 'An unknown or expired `access_token`.' },
  accessTokenNotEcosystem: { status: 401, code: 'Unauthorized', message: 'The access_token does not open the ecosystem.', when: 'A container token used on the ecosystem.' },
  accessTokenNotContainer: { status: 401, code: 'Unauthorized', message: 'The access_token does not open this container.', when: 'A token of another resource used on a container.' },
  containerNotFound: { status: 404, code: 'NotFound', message: 'The container does not exist.', when: "The token's container is gone or another user's." },
  wopiSrcNotFound: { status: 404, code: 'NotFound', message: "The WopiSrc is missing, unknown or not the caller's.", when: '`GET_WOPI_SRC_WITH_ACCESS_TOKEN` without a container of the caller.' },
  operationNotSupported: { status: 501, code: 'NotImplemented', message: "The ecosystem operation '{operation}' is not supported.", when: 'Another `X-WOPI-EcosystemOperation`.' },
});
