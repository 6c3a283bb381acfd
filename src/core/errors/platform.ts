/**
 * The error catalogue of the data platform (spec: analytics §4.2, §7), rendered as platform `ErrorResponse`.
 * Raise with `errors.platform.<name>(params, options)`; see `catalogue.ts`. Every platform
 * error says whether a retry may help (`options.isRetriable`); most name the resource
 * (`options.relatedResource`).
 */
import { defineErrors } from './catalogue.ts';
import { sharedEntries } from './common.ts';
import type { ApiError } from './envelope.ts';

/** Errors of the `platform` family. */
export const platform = defineErrors('platform', {
  invalidBody: { status: 400, code: 'InvalidInput', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'EntityNotFound', message: '{message}', when: 'No route matches the path.' },
  ...sharedEntries('platform'),
  invalidInput: { status: 400, code: 'InvalidInput', message: 'The request has an invalid input', when: 'A parameter or property breaks a rule (one `InvalidParameter` detail says which; raise with `invalidInputDetail`).' },
  invalidParameter: { status: 400, code: 'InvalidParameter', message: '{message}', when: 'The detail of `invalidInput` (only inside `moreDetails`).' },
  notJson: { status: 415, code: 'InvalidInput', message: "The content media type '{contentType}' is not supported; send application/json.", when: 'An operation that consumes JSON got another media type.' },
  corruptedPayload: { status: 400, code: 'CorruptedPayload', message: '{message}', when: 'A definition part does not decode or does not fit its format (a detail names the part).' },
  tokenExpired: { status: 401, code: 'TokenExpired', message: 'Access token has expired, resubmit with a new access token.', when: 'The bearer token has expired.' },
  unauthorized: { status: 401, code: 'Unauthorized', message: 'Missing or invalid authentication: {reason}', when: 'No bearer token, or one that does not verify for the platform.' },
  requestBlocked: { status: 429, code: 'RequestBlocked', message: 'Request is blocked by the upstream service until: {until} (UTC)', when: "The caller's request budget is spent (reference §4.3)." },
  insufficientScopes: {
    status: 403,
    code: 'InsufficientScopes',
    message: "The caller doesn't have permissions to call the API: the token holds none of the scopes {scopes}.",
    when: 'A delegated token holds none of the scopes of the operation.',
  },
  workspaceNotFound: { status: 404, code: 'WorkspaceNotFound', message: 'The requested workspace was not found.', when: 'The tenant has no such workspace.' },
  insufficientWorkspaceRole: {
    status: 403,
    code: 'InsufficientWorkspaceRole',
    message: 'The caller does not have sufficient permissions: this operation needs the workspace role {minimum} or higher ({held}).',
    when: 'The caller holds no role in the workspace, or a weaker one than the operation needs.',
  },
  operationNotFound: { status: 404, code: 'OperationNotFound', message: 'The requested operation was not found.', when: 'No such operation, or another principal started it.' },
  operationHasNoResult: { status: 400, code: 'OperationHasNoResult', message: 'The operation has no result', when: 'The result of an operation that has not succeeded (or made no item).' },
  itemNotFound: { status: 404, code: 'ItemNotFound', message: 'The requested item was not found.', when: 'The workspace has no such item.' },
  itemNameInUse: { status: 409, code: 'ItemDisplayNameAlreadyInUse', message: "Requested '{name}' is already in use.", when: 'Another item of the type in the workspace has the display name.' },
  unsupportedItemType: { status: 400, code: 'UnsupportedItemType', message: "Stratus creates only Eventstream items; '{type}' is not supported.", when: 'Creating an item of another type through `/items`.' },
  invalidItemType: { status: 400, code: 'InvalidItemType', message: "The item type '{type}' is not valid.", when: 'Listing items of an unknown type.' },
  itemTypeNotHere: { status: 400, code: 'InvalidItemType', message: "The item type '{type}' is not valid here; this endpoint creates Eventstream items.", when: 'Creating another type through the eventstream endpoint.' },
  folderNotFound: { status: 404, code: 'FolderNotFound', message: 'Could not find the requested folder.', when: 'The folder of a new item does not exist.' },
  labelNotFound: { status: 400, code: 'SensitivityLabelNotFound', message: "The sensitivity label '{labelId}' does not exist in the tenant.", when: 'An unknown sensitivity label under `ApplyOrFail`.' },
  labelNotPublished: {
    status: 400,
    code: 'SensitivityLabelCannotBeApplied',
    message: "The sensitivity label '{name}' cannot be applied: it is not published to the caller.",
    when: 'The label is not published to the caller under `ApplyOrFail` (the operation fails, or the request when it is not long-running).',
  },
  invalidContinuationToken: { status: 400, code: 'InvalidContinuationToken', message: 'The continuationToken is not valid for this list.', when: 'A continuation token of another list, or none of ours.' },
  invalidDefinitionFormat: { status: 400, code: 'InvalidDefinitionFormat', message: "The definition format '{format}' is not supported; use 'eventstream' or omit it.", when: 'Getting a definition in another format.' },
  invalidUpdate: { status: 400, code: 'InvalidRequest', message: 'Invalid update request: give displayName and/or description.', when: 'An update that changes nothing.' },
});

/**
 * The platform's 400 for a malformed request: `InvalidInput` with one `InvalidParameter`
 * detail saying which rule broke (reference §4.1; live bodies), not retriable.
 * @param message the detail's message.
 */
export function invalidInputDetail(message: string): ApiError {
  return platform.invalidInput({}, { details: [{ code: platform.entries.invalidParameter.code, message }], isRetriable: false });
}
