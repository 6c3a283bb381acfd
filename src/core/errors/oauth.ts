/**
 * The error catalogue of the identity provider (spec: resource-manager §5), rendered as OAuth 2.0 error JSON (RFC 6749 §5.2).
 * Raise with `errors.oauth.<name>(params, options)`; see `catalogue.ts`. The authorize
 * endpoint shows some of them as an error page or sends them back to the client's redirect
 * URI instead (RFC 6749 §4.1.2.1); userinfo answers them as a bearer challenge (RFC 6750 §3).
 */
import { defineErrors } from './catalogue.ts';
import { sharedEntries } from './common.ts';

/** Errors of the `oauth` family. */
export const oauth = defineErrors('oauth', {
  invalidBody: { status: 400, code: 'invalid_request', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'invalid_request', message: '{message}', when: 'No route matches the path.' },
  ...sharedEntries('oauth'),
  repeatedFormParameter: { status: 400, code: 'invalid_request', message: "The parameter '{name}' is given more than once (RFC 6749 §3.1).", when: 'A form parameter is given more than once.' },
  badText: { status: 400, code: 'invalid_request', message: "The parameter '{name}' contains a NUL character or invalid text.", when: 'A path, query or form value holds U+0000 or a lone surrogate.' },
  // Tenants, clients and redirect URIs.
  tenantNotFound: { status: 400, code: 'invalid_tenant', message: "AADSTS90002: Tenant '{tenant}' not found.", when: 'The tenant segment of the sign-in page or of the metadata names no tenant.' },
  tokenTenantNotFound: { status: 400, code: 'invalid_request', message: "AADSTS90002: Tenant '{tenant}' not found.", when: 'The tenant segment of the token or device-code endpoint names no tenant.' },
  appNotFound: { status: 400, code: 'unauthorized_client', message: "AADSTS700016: Application with identifier '{clientId}' was not found in the directory '{tenant}'.", when: 'The client id names no application of the tenant.' },
  redirectUriNotRegistered: {
    status: 400,
    code: 'invalid_request',
    message: "AADSTS50011: The redirect URI '{redirectUri}' specified in the request does not match the redirect URIs configured for the application '{clientId}'.",
    when: 'The sign-in request names a redirect URI the application has not registered.',
  },
  invalidClientSecret: {
    status: 401,
    code: 'invalid_client',
    message: "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value for app '{clientId}'.",
    when: 'The client secret is wrong.',
  },
  clientSecretMissing: { status: 401, code: 'invalid_client', message: "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.", when: 'A confidential client sent no secret.' },
  // Client assertions (a certificate registered on the application; RFC 7523 §2.2).
  assertionTypeInvalid: {
    status: 400,
    code: 'invalid_request',
    message: "AADSTS50027: client_assertion_type '{type}' is not supported; use 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' with a client_assertion.",
    when: 'A client assertion comes with another assertion type, or the type without an assertion.',
  },
  assertionMalformed: { status: 400, code: 'invalid_request', message: 'AADSTS50027: JWT token is invalid or malformed.', when: 'The client assertion is not a JWT, or its `iss` and `sub` are not the client id.' },
  assertionClientMismatch: { status: 400, code: 'invalid_client', message: "AADSTS700021: Client assertion application identifier doesn't match 'client_id' parameter.", when: 'The assertion is issued by another client than `client_id`.' },
  assertionKeyNotFound: {
    status: 401,
    code: 'invalid_client',
    message: "AADSTS700027: The certificate with identifier used to sign the client assertion is not registered on application. [Reason - The key was not found., Thumbprint of key used by client: '{thumbprint}']",
    when: 'No valid certificate of the application has the thumbprint of the assertion (`x5t`, `x5t#S256`).',
  },
  assertionSignature: { status: 401, code: 'invalid_client', message: 'AADSTS700027: Client assertion failed signature validation.', when: 'The assertion is not signed by a certificate of the application.' },
  assertionAlgorithm: { status: 401, code: 'invalid_client', message: "AADSTS700027: Client assertion is signed with the unsupported algorithm '{alg}'; use RS256 or PS256.", when: 'The assertion is signed with another algorithm.' },
  assertionExpired: { status: 401, code: 'invalid_client', message: 'AADSTS700024: Client assertion is not within its valid time range.', when: 'The assertion has expired or is not yet valid.' },
  assertionAudience: { status: 401, code: 'invalid_client', message: "AADSTS700212: The client assertion audience '{aud}' is not the token endpoint of this tenant.", when: 'The assertion names another audience than the token endpoint.' },
  assertionClaimMissing: { status: 401, code: 'invalid_client', message: "AADSTS50027: The client assertion's claim '{claim}' is missing or invalid.", when: 'The assertion lacks `exp` or `jti`, or has a wrong `iss`/`sub`.' },
  servicePrincipalMissing: {
    status: 400,
    code: 'invalid_client',
    message: "AADSTS7000229: The client application {clientId} is missing service principal in the tenant {tenant}.",
    when: 'Client credentials for an application whose service principal was not created (or was deleted).',
  },
  invalidInstance: { status: 400, code: 'invalid_instance', message: "AADSTS50049: Unknown or invalid instance '{instance}'.", when: 'Instance discovery names an authorization endpoint not on this host.' },
  // Request parameters.
  missingParameter: { status: 400, code: 'invalid_request', message: "AADSTS900144: The request body must contain the following parameter: '{name}'.", when: 'A required parameter is missing.' },
  missingCredentials: { status: 400, code: 'invalid_request', message: "AADSTS900144: The request body must contain the following parameters: 'username' and 'password'.", when: 'The password grant lacks the user name or password.' },
  parameterNotOnce: { status: 400, code: 'invalid_request', message: "AADSTS900144: The parameter '{name}' must be sent once.", when: 'A form parameter of the token or device-code endpoint is given more than once.' },
  unsupportedResponseType: {
    status: 400,
    code: 'unsupported_response_type',
    message: "AADSTS70005: response_type '{responseType}' is not supported; use 'code', 'token', 'id_token' or 'id_token token'.",
    when: 'The sign-in request asks for another response type (sent to the redirect URI).',
  },
  unsupportedResponseMode: { status: 400, code: 'invalid_request', message: "AADSTS90007: response_mode '{mode}' is not supported; use 'query', 'fragment' or 'form_post'.", when: 'The sign-in request asks for another response mode (sent to the redirect URI).' },
  queryModeWithTokens: {
    status: 400,
    code: 'invalid_request',
    message: "AADSTS900144: response_mode 'query' is not allowed when the response carries tokens; use 'fragment' or 'form_post'.",
    when: 'Tokens were asked to be sent in the query (sent to the redirect URI).',
  },
  idTokenNeedsOpenid: { status: 400, code: 'invalid_request', message: "AADSTS900144: response_type 'id_token' needs the 'openid' scope.", when: "An ID token was asked without the 'openid' scope (sent to the redirect URI)." },
  invalidCodeChallenge: {
    status: 400,
    code: 'invalid_request',
    message: "AADSTS501471: The code_challenge '{challenge}' with code_challenge_method '{method}' is not valid; use S256 (43 base64url characters) or plain (43–128 characters).",
    when: 'The PKCE challenge does not fit its method (sent to the redirect URI).',
  },
  // Scopes.
  scopeNamesNoResource: {
    status: 400,
    code: 'invalid_scope',
    message: "AADSTS70011: The provided request must include a 'scope' input parameter naming one resource, such as '{example}'. The provided value '{scope}' is not valid.",
    when: 'The scope names no resource, or more than one.',
  },
  scopeUnknown: { status: 400, code: 'invalid_scope', message: "AADSTS70011: The provided value for the input parameter 'scope' is not valid. The scope '{scope}' does not exist.", when: 'The scope names an unknown resource.' },
  audienceNotConfigured: {
    status: 400,
    code: 'invalid_resource',
    message:
      "AADSTS500011: The resource principal named {resource} was not found in the tenant. Stratus accepts a real cloud's resource when STRATUS_AUDIENCE_ALIASES names it for an API family: STRATUS_AUDIENCE_ALIASES=<family>={resource} (family one of arm, analytics, platform, mail, wopi; e.g. mail={resource}).",
    when: 'A scope or `resource` names an absolute http(s) resource that is neither the origin nor an alias of `STRATUS_AUDIENCE_ALIASES`.',
  },
  scopeNotOnResource: { status: 400, code: 'invalid_scope', message: "AADSTS65005: The application asked for scope '{scope}' that doesn't exist on the resource '{resource}'.", when: 'A delegated scope the resource does not offer.' },
  clientCredentialsScope: {
    status: 400,
    code: 'invalid_scope',
    message: "AADSTS1002012: The provided value for scope '{scope}' is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).",
    when: 'The client-credentials grant asks for anything but one `/.default` scope.',
  },
  // Grants.
  unsupportedGrantType: { status: 400, code: 'unsupported_grant_type', message: "AADSTS70003: The app requested an unsupported grant type '{grant}'.", when: 'Another grant type.' },
  badCredentials: { status: 400, code: 'invalid_grant', message: 'AADSTS50126: Error validating credentials due to invalid username or password.', when: 'The password grant names an unknown user or a wrong password.' },
  codeNotValid: { status: 400, code: 'invalid_grant', message: "AADSTS70000: The provided value for the 'code' parameter is not valid, or the code was already redeemed.", when: 'An unknown, redeemed or foreign authorization code.' },
  codeExpired: {
    status: 400,
    code: 'invalid_grant',
    message: 'AADSTS70008: The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
    when: 'The authorization code has expired.',
  },
  redirectUriNotOfCode: { status: 400, code: 'invalid_grant', message: "AADSTS50011: The redirect URI '{redirectUri}' does not match the redirect URI of the authorization request.", when: 'The code is redeemed with another redirect URI.' },
  codeVerifierMismatch: { status: 400, code: 'invalid_grant', message: 'AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request.', when: 'The PKCE verifier does not match the challenge.' },
  codeVerifierWithoutChallenge: {
    status: 400,
    code: 'invalid_grant',
    message: 'AADSTS501481: The Code_Verifier was sent, but the authorization request of this code had no code_challenge.',
    when: 'A code issued without a PKCE challenge is redeemed with a code_verifier (a downgrade: OAuth 2.0 Security BCP §2.1.1).',
  },
  accountLocked: {
    status: 400,
    code: 'invalid_grant',
    message: "AADSTS50053: The account is locked, you've tried to sign in too many times with an incorrect user ID or password.",
    when: 'Too many wrong passwords for the account, or wrong secrets for the client, within the lockout window (smart lockout; `Retry-After` says when to try again).',
  },
  clientLocked: {
    status: 401,
    code: 'invalid_client',
    message: 'AADSTS50053: The application is locked: too many requests with an incorrect client secret. Try again in {seconds} seconds.',
    when: 'Too many wrong client secrets for the client within the lockout window (`Retry-After` says when to try again).',
  },
  deviceCodeStartsExceeded: {
    status: 429,
    code: 'temporarily_unavailable',
    message: 'AADSTS90055: Too many device-code requests from this client or address; try again in {seconds} seconds.',
    when: 'Unauthenticated device-code starts pass the per-client or per-address limit (`Retry-After`).',
  },
  scopeTooLong: { status: 400, code: 'invalid_scope', message: "AADSTS70011: The provided value for the input parameter 'scope' is too long: {length} characters, at most {max}.", when: 'The scope string passes its length limit.' },
  codeReplayed: {
    status: 400,
    code: 'invalid_grant',
    message: "AADSTS54005: OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.",
    when: 'An authorization code is redeemed a second time; the refresh tokens issued from it are revoked.',
  },
  userNotFound: { status: 400, code: 'invalid_grant', message: 'AADSTS50034: The user account does not exist in the directory.', when: 'The user of a grant no longer exists (or is not of the tenant).' },
  refreshTokenNotValid: {
    status: 400,
    code: 'invalid_grant',
    message: 'AADSTS50173: The provided grant has expired due to it being revoked, already used or expired; a fresh auth token is needed. The user might have changed or reset their password.',
    when: 'An unknown, used, revoked, expired or foreign refresh token.',
  },
  deviceCodeNotValid: { status: 400, code: 'invalid_grant', message: "AADSTS70000: The provided value for the 'device_code' parameter is not valid.", when: 'An unknown device code.' },
  authorizationPending: { status: 400, code: 'authorization_pending', message: 'AADSTS70016: OAuth 2.0 device flow error. Authorization is pending. Continue polling.', when: 'The user has not answered the device sign-in yet (RFC 8628 §3.5).' },
  slowDown: { status: 400, code: 'slow_down', message: 'AADSTS70016: Polled too often; wait {seconds} seconds between polls.', when: 'The device code is polled faster than the interval.' },
  deviceCodeExpired: { status: 400, code: 'expired_token', message: 'AADSTS70019: Verification code expired.', when: 'The device code has expired.' },
  deviceSignInDeclined: { status: 400, code: 'access_denied', message: 'AADSTS70018: The user declined the sign-in request.', when: 'The user declined the device sign-in.' },
  // userinfo (a bearer challenge: `WWW-Authenticate` and `{error, error_description}`).
  bearerRequired: { status: 401, code: 'invalid_request', message: 'A bearer token is required.', when: 'userinfo without a bearer token.' },
  bearerInvalid: { status: 401, code: 'invalid_token', message: '{message}', when: 'userinfo with a token that does not verify.' },
  bearerNotUser: { status: 401, code: 'invalid_token', message: 'The token was not issued to a user.', when: 'userinfo with an application token.' },
  bearerUserGone: { status: 401, code: 'invalid_token', message: 'The user no longer exists.', when: "userinfo for a deleted user." },
});
