/**
 * The error catalogue of data share (spec: resource-manager §4.5, §7), rendered as `DataShareError`.
 * Raise with `errors.datashare.<name>(params, options)`; see `catalogue.ts`. The gateway's
 * errors (api-version, bearer, subscription, authorization) are `errors.arm`'s, rendered in
 * this envelope on data share routes.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `datashare` family. */
export const datashare = defineErrors('datashare', {
  invalidBody: { status: 400, code: 'InvalidRequestContent', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },

  resourceNotFound: { status: 404, code: 'ResourceNotFound', message: "The Resource '{typeAndName}' under resource group '{resourceGroup}' was not found.", when: 'The account, share, invitation or share subscription the path names does not exist.' },
  invalidResourceName: {
    status: 400,
    code: 'InvalidResourceName',
    message: "The {kind} name '{name}' is invalid. It must be 1 to 90 letters, digits, '-', '_' or '.', start with a letter or digit and not end with '-' or '.'.",
    when: 'A new resource is given a name that breaks the naming rule (target: the kind).',
  },
  invalidPathName: {
    status: 400,
    code: 'InvalidResourceName',
    message: "The value '{value}' of '{param}' is invalid: a name cannot contain '/' or control characters.",
    when: 'A path name holds `/` (sent as `%2F`) or a control character (target: the parameter).',
  },
  invalidSkipToken: { status: 400, code: 'InvalidSkipToken', message: "The value '{token}' of '$skipToken' is not valid.", when: 'A `$skipToken` does not decode or was not made by Stratus (target `$skipToken`).' },
  invalidFilter: { status: 400, code: 'InvalidFilter', message: '{message}', when: 'A `$filter` does not parse, names an unknown field or compares with a wrong type; the message gives the position.' },
  invalidOrderBy: { status: 400, code: 'InvalidOrderBy', message: '{message}', when: 'An `$orderby` does not parse or names an unknown field; the message gives the position.' },
  bodyNotJson: { status: 415, code: 'UnsupportedMediaType', message: "The content media type '{contentType}' is not supported. Send 'application/json'.", when: 'A write carries a body that is not JSON.' },
  invalidTag: { status: 400, code: 'InvalidTag', message: "The tag '{tag}' is invalid: names are 1 to 512 characters and values strings of at most 256.", when: 'A tag name or value is too long or not a string.' },
  tooManyRequests: {
    status: 429,
    code: 'TooManyRequests',
    message: "The number of read requests for subscription '{subscriptionId}' exceeded the limit of {limit} per {windowSeconds} seconds. Please retry after {retryAfterSeconds} seconds.",
    when: "The subscription's read budget is spent; carries `Retry-After`.",
  },
  concurrentCreate: { status: 409, code: 'Conflict', message: "The resource '{name}' was created by a concurrent request; retry.", when: 'Two requests created the same resource at once; the later one loses.' },
  invitationAlreadyExists: { status: 409, code: 'InvitationAlreadyExists', message: "The invitation '{name}' already exists; invitations cannot be updated.", when: 'An invitation is PUT again.' },
  invitationNotFound: {
    status: 404,
    code: 'InvitationNotFound',
    message: "The invitation '{invitationId}' was not found or is not addressed to the caller.",
    when: 'A share subscription names an invitation that does not exist or is addressed to someone else.',
  },
  invitationShareGone: { status: 404, code: 'InvitationNotFound', message: "The share of invitation '{invitationId}' no longer exists.", when: 'A share subscription names an invitation whose share was deleted.' },
  invitationAlreadyAccepted: { status: 409, code: 'InvitationAlreadyAccepted', message: "The invitation '{invitationId}' has already been accepted.", when: 'A share subscription names an invitation already accepted.' },
  sourceShareDeleted: { status: 409, code: 'SourceShareDeleted', message: "The source share of share subscription '{name}' no longer exists.", when: "`synchronize` is called on a share subscription whose share was deleted." },
});
