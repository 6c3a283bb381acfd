/**
 * The errors every family has (the app's protocol-level answers and injected faults): one
 * message and status each, and the code each family gives it. Every family's catalogue
 * declares them under the same names, so `errors[family].methodNotAllowed({ method })` works
 * for any family: the families of `oauth.ts`, `analytics.ts`, `platform.ts`, `wopi.ts` and
 * `control.ts` spread {@link sharedEntries} into their own declaration; for the others
 * (`arm`, `datashare`, `mail`) `index.ts` declares them from here and merges them in with
 * {@link mergeCatalogues}.
 *
 * Source: design "Errors come from the catalogue"; issue 11 items 3–4 (protocol errors in the
 * family's envelope), issue 12 item 2 (injected faults).
 */
import { ApiError, type Family } from './envelope.ts';
import type { Catalogue, ErrorEntry } from './catalogue.ts';

/** A code per family. */
type Codes = Readonly<Record<Family, string>>;

/** The code of a malformed request body, per family (also each catalogue's `invalidBody`). */
const bodyCodes: Codes = {
  oauth: 'invalid_request',
  arm: 'InvalidRequestContent',
  datashare: 'InvalidRequestContent',
  analytics: 'BadRequest',
  platform: 'InvalidInput',
  mail: 'BadRequest',
  wopi: 'BadRequest',
  control: 'BadRequest',
};

/** `code` for every family, with exceptions. */
function codes(code: string, except: Partial<Record<Family, string>> = {}): Codes {
  return { oauth: code, arm: code, datashare: code, analytics: code, platform: code, mail: code, wopi: code, control: code, ...except };
}

/** The shared errors: status, message template, when, and the code per family. */
const table = {
  methodNotAllowed: {
    status: 405,
    message: "The method '{method}' is not supported by this server.",
    when: 'No route of any family answers the method (the `Allow` header lists those that do).',
    codes: codes('MethodNotAllowed', { oauth: 'invalid_request', mail: 'BadRequest' }),
  },
  proxyNotSupported: {
    status: 405,
    message: 'The method CONNECT is not supported: this server is not a proxy.',
    when: 'A `CONNECT` request (answered on the raw socket).',
    codes: codes('MethodNotAllowed', { oauth: 'invalid_request', mail: 'BadRequest' }),
  },
  uriTooLong: {
    status: 414,
    message: 'The request URL is too long.',
    when: 'The request URL alone passes half the request-head limit (64 KiB), or does not fit the parser.',
    codes: codes('RequestUriTooLong', { oauth: 'invalid_request' }),
  },
  headersTooLarge: {
    status: 431,
    message: 'The request headers are too large.',
    when: "The request head passes what Node's parser accepts (1 MiB; answered on the raw socket).",
    codes: codes('RequestHeaderFieldsTooLarge', { oauth: 'invalid_request' }),
  },
  headTooLarge: {
    status: 431,
    message: 'The request line and headers exceed {bytes} bytes.',
    when: 'The request line and headers together pass 64 KiB.',
    codes: codes('RequestHeaderFieldsTooLarge', { oauth: 'invalid_request' }),
  },
  requestTimeout: {
    status: 408,
    message: 'The request was not received in time.',
    when: 'The request head or body did not arrive within the server timeout.',
    codes: codes('RequestTimeout', { oauth: 'invalid_request' }),
  },
  malformedRequest: {
    status: 400,
    message: 'The request could not be parsed as HTTP/1.1 (malformed request line, header, or chunked body).',
    when: 'Node\'s HTTP parser refused the request (answered on the raw socket).',
    codes: codes('BadRequest', { oauth: 'invalid_request', mail: 'ErrorInvalidRequest', platform: 'InvalidInput' }),
  },
  malformedUrl: {
    status: 400,
    message: 'The request URL is malformed (invalid percent-encoding).',
    when: 'The router cannot decode the path.',
    codes: codes('BadRequest', { oauth: 'invalid_request', mail: 'ErrorInvalidRequest' }),
  },
  pathSegmentTooLong: {
    status: 414,
    message: 'A path segment of the request URL is too long.',
    when: 'A path parameter passes 2000 characters.',
    codes: codes('RequestUriTooLong', { oauth: 'invalid_request', mail: 'ErrorInvalidRequest' }),
  },
  repeatedParameter: {
    status: 400,
    message: "The query parameter '{name}' is given more than once, but it must be given at most once.",
    when: 'A query parameter that takes one value is given more than once.',
    codes: codes('BadRequest', { oauth: 'invalid_request', arm: 'InvalidParameter', datashare: 'InvalidParameter', platform: 'InvalidInput' }),
  },
  bodyTooDeep: {
    status: 400,
    message: '{message}',
    when: 'The JSON body is nested deeper than the limit (the platform answers `invalidInputDetail` instead).',
    codes: { ...bodyCodes, mail: 'RequestBodyRead' },
  },
  unstorableText: {
    status: 400,
    message: 'The request contains characters that cannot be stored (U+0000 or invalid text).',
    when: 'The database refused text of the request (NUL, invalid encoding): the last guard behind the input checks.',
    codes: bodyCodes,
  },
  unsupportedMediaType: {
    status: 415,
    message: "The content media type '{contentType}' is not supported.",
    when: 'No body parser accepts the `Content-Type`.',
    codes: { ...bodyCodes, arm: 'UnsupportedMediaType' },
  },
  bodyTooLarge: {
    status: 413,
    message: 'The request body is too large.',
    when: "The body passes the route's limit: its family's (mail, resource manager 4 MB; identity provider 64 KiB; control plane 1 MiB; others 150 MiB), answered from Content-Length before the body is read.",
    codes: codes('RequestEntityTooLarge', { mail: 'ErrorRequestEntityTooLarge', oauth: 'invalid_request' }),
  },
  requestRejected: {
    status: 400,
    message: '{message}',
    when: 'The framework refused the request with another 4xx (raised with that status through `withStatus`).',
    codes: bodyCodes,
  },
  internalError: {
    status: 500,
    message: 'An internal error occurred; the request was not completed.',
    when: 'An unexpected failure (logged).',
    codes: codes('InternalServerError', { oauth: 'server_error', mail: 'generalException' }),
  },
  injectedThrottle: {
    status: 429,
    message: 'Rate limit is exceeded. Try again later. (injected fault)',
    headers: { 'Retry-After': '1' },
    when: 'A fault rule with status 429 hit the request (`Retry-After` is the rule\'s, 1 s by default).',
    codes: codes('TooManyRequests', { oauth: 'temporarily_unavailable', platform: 'RequestBlocked' }),
  },
  injectedServerError: {
    status: 500,
    message: 'An internal error occurred. (injected fault)',
    when: 'A fault rule with status 500 hit the request.',
    codes: codes('InternalServerError', { oauth: 'server_error', mail: 'generalException' }),
  },
  injectedUnavailable: {
    status: 503,
    message: 'The service is temporarily unavailable. (injected fault)',
    when: 'A fault rule with status 503 hit the request.',
    codes: codes('ServiceUnavailable', { oauth: 'temporarily_unavailable', mail: 'serviceNotAvailable' }),
  },
} as const satisfies Record<string, Omit<ErrorEntry, 'code'> & { codes: Codes }>;

/** The shared entries of one family, as declared in its catalogue (message templates keep their literal types). */
export type SharedEntries = { [K in keyof typeof table]: { status: number; code: string; message: (typeof table)[K]['message']; headers?: Record<string, string>; when: string } };

/**
 * The shared entries with `family`'s codes, to spread into its `defineErrors` declaration.
 * @param family the family whose codes to take.
 */
export function sharedEntries(family: Family): SharedEntries {
  const out: Record<string, ErrorEntry> = {};
  for (const [name, { codes: byFamily, ...entry }] of Object.entries(table)) out[name] = { ...entry, code: byFamily[family] };
  return out as SharedEntries;
}

/**
 * One catalogue with the entries of both (for families whose file does not declare the
 * shared entries itself).
 * @param a the family's catalogue.
 * @param b more entries of the same family.
 */
export function mergeCatalogues<A extends Record<string, ErrorEntry>, B extends Record<string, ErrorEntry>>(a: Catalogue<A>, b: Catalogue<B>): Catalogue<A & B> {
  // defineErrors already refuses a name declared twice for a family; say which catalogue it was.
  for (const name of Object.keys(b.entries)) if (name in a.entries) throw new Error(`error catalogue: ${a.family}.${name} is both the family's and a shared entry`);
  return { ...a, ...b, entries: { ...a.entries, ...b.entries }, family: a.family } as unknown as Catalogue<A & B>;
}

/**
 * `err` with another status (same code, message and options): for an entry whose status is
 * decided at run time — `requestRejected` with the framework's 4xx.
 * @param err a raised error.
 * @param status the HTTP status to answer instead.
 */
export function withStatus(err: ApiError, status: number): ApiError {
  return status === err.status ? err : new ApiError(status, err.code, err.message, err.options);
}

/**
 * The `WWW-Authenticate` challenge of a refused bearer token (RFC 6750 §3): the identity
 * provider's authorize endpoint (tenant `common`), with `error="invalid_token"` unless the
 * request carried no token at all (RFC 6750 §3.1).
 * @param origin the server's origin (`https://host:port`).
 * @param invalidToken a token was sent but is not usable.
 */
export function bearerChallenge(origin: string, invalidToken: boolean): string {
  return `Bearer authorization_uri="${origin}/common/oauth2/authorize"${invalidToken ? ', error="invalid_token"' : ''}`;
}
