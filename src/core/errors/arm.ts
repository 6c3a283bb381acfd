/**
 * The error catalogue of resource manager (spec: resource-manager §7), rendered as ARM `ErrorResponse`.
 * Raise with `errors.arm.<name>(params, options)`; see `catalogue.ts`.
 *
 * Gateway errors (api-version, bearer, subscription, resource group, authorization) are raised
 * here for every resource-manager route, data share's included: the route's family picks the
 * envelope. Codes and message formats of the gateway: reference §1.2.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the `arm` family. */
export const arm = defineErrors('arm', {
  invalidBody: { status: 400, code: 'InvalidRequestContent', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },

  // ---- the gateway (spec §5, §7; reference §1.2) ----
  missingApiVersion: { status: 400, code: 'MissingApiVersionParameter', message: 'The api-version query parameter (?api-version=) is required for all requests.', when: 'The request has no `api-version` query parameter.' },
  invalidApiVersion: {
    status: 400,
    code: 'InvalidApiVersionParameter',
    message: "The api-version '{given}' is invalid. The supported versions are '{supported}'.",
    when: 'The `api-version` is not one the operation supports (`supported`: the comma-separated list).',
  },
  authenticationFailed: { status: 401, code: 'AuthenticationFailed', message: "Authentication failed. The 'Authorization' header is missing.", when: 'No bearer token; carries a `WWW-Authenticate` challenge.' },
  invalidAuthenticationHeader: {
    status: 401,
    code: 'AuthenticationFailedInvalidHeader',
    message: "Authentication failed. The 'Authorization' header is provided in an invalid format.",
    when: 'The `Authorization` header is not `Bearer <token>`; carries a `WWW-Authenticate` challenge.',
  },
  invalidAuthenticationToken: { status: 401, code: 'InvalidAuthenticationToken', message: 'The access token is invalid. {detail}', when: 'The token does not verify (signature, expiry, audience, issuer); carries a `WWW-Authenticate` challenge.' },
  invalidSubscriptionId: { status: 400, code: 'InvalidSubscriptionId', message: "The provided subscription identifier '{subscriptionId}' is malformed or invalid.", when: 'The subscription id of the path is not a GUID.' },
  subscriptionNotFound: { status: 404, code: 'SubscriptionNotFound', message: "The subscription '{subscriptionId}' could not be found.", when: "The subscription does not exist in the caller's tenant." },
  invalidResourceGroup: {
    status: 400,
    code: 'InvalidResourceGroup',
    message: "The provided resource group name '{name}' has these invalid characters: '{invalid}'. The name can only be a letter, digit, '-', '.', '(', ')' or '_'.",
    when: 'The resource group name of the path breaks the naming rule (characters, length, trailing dot).',
  },
  resourceGroupNotFound: { status: 404, code: 'ResourceGroupNotFound', message: "Resource group '{name}' could not be found.", when: 'The resource group of the path does not exist.' },
  authorizationFailed: {
    status: 403,
    code: 'AuthorizationFailed',
    message:
      "The client '{client}' with object id '{objectId}' does not have authorization to perform action '{action}' over scope '{scope}' or the scope is invalid. If access was recently granted, please refresh your credentials.",
    when: 'No role the caller holds at or above the scope grants the action (billing: no billing role on the account).',
  },

  // ---- resources and input (spec §4, §7) ----
  resourceNotFound: { status: 404, code: 'ResourceNotFound', message: "The Resource '{typeAndName}' under resource group '{resourceGroup}' was not found.", when: 'The resource the path names does not exist.' },
  invalidParameter: { status: 400, code: 'InvalidParameter', message: '{message}', when: 'A path name, query option or body member is invalid; `target` names it.' },
  repeatedQueryParameter: { status: 400, code: 'InvalidParameter', message: "The query parameter '{name}' is given more than once.", when: 'A query parameter that takes one value is repeated (role management policies; no `target`).' },
  bodyNotJson: { status: 415, code: 'UnsupportedMediaType', message: "The content media type '{contentType}' is not supported. Send 'application/json'.", when: 'A write carries a body that is not JSON (automation).' },
  unsupportedMediaTypeJsonOnly: { status: 415, code: 'UnsupportedMediaType', message: "The content media type '{contentType}' is not supported. Only 'application/json' is supported.", when: 'A role management policy PATCH carries a body that is not JSON.' },
  concurrentCreate: { status: 409, code: 'Conflict', message: "The resource '{name}' was created by a concurrent request; retry.", when: 'Two requests created the same resource at once; the later one loses.' },

  // ---- automation (spec §4.6; reference §6) ----
  webhookUriInUse: { status: 409, code: 'Conflict', message: 'Another webhook already uses this uri; get a new one from generateUri.', when: "A webhook is created with another webhook's uri." },
  concurrentWebhookCreate: {
    status: 409,
    code: 'Conflict',
    message: "The webhook '{name}' or its uri was created by a concurrent request; read it and retry.",
    when: 'Two requests created the same webhook, or webhooks with the same uri, at once.',
  },
  invalidWebhookToken: { status: 400, code: 'BadRequest', message: 'The webhook token in the URL is missing or invalid.', when: 'A webhook call has no `token` or one of the wrong form.' },
  webhookNotFound: { status: 404, code: 'NotFound', message: 'The webhook was not found.', when: 'A webhook call names no webhook.' },
  webhookDisabled: { status: 400, code: 'BadRequest', message: 'The webhook is disabled.', when: 'A webhook call names a disabled webhook.' },
  webhookExpired: { status: 400, code: 'BadRequest', message: 'The webhook has expired.', when: 'A webhook call names a webhook past its expiry time.' },
  webhookRunbookNotFound: { status: 404, code: 'NotFound', message: "The runbook '{runbook}' of the webhook was not found.", when: "A webhook call names a webhook whose runbook was deleted." },

  // ---- authorization (spec §4.1, §4.2; reference §2) ----
  managementGroupNotFound: { status: 404, code: 'ManagementGroupNotFound', message: "The management group '{name}' could not be found.", when: "The management group of the scope does not exist in the caller's tenant." },
  roleManagementPolicyNotFound: {
    status: 404,
    code: 'RoleManagementPolicyNotFound',
    message: "The role management policy '{name}' does not exist at scope '{scope}'.",
    when: 'The policy name is not that of a role definition at the scope.',
  },
  invalidRoleManagementPolicy: { status: 400, code: 'InvalidRoleManagementPolicy', message: '{message}', when: 'A policy PATCH body breaks a rule of the policy schema; the message names the path and the allowed values.' },
  invalidFilter: { status: 400, code: 'InvalidFilter', message: '{message}', when: 'A `$filter` / `filter` does not parse, names an unknown property or has an unsupported shape; the message gives the position.' },
  invalidOrderBy: { status: 400, code: 'InvalidOrderBy', message: '{message}', when: 'An `orderBy` does not parse or names an unknown property; the message gives the position.' },
  roleDefinitionDoesNotExist: { status: 400, code: 'RoleDefinitionDoesNotExist', message: "The specified role definition with ID '{id}' does not exist.", when: 'A `$filter` names a role definition id of no known role.' },

  // ---- the base surface: subscriptions, providers, resource groups, resources, tags (issue 27; reference resource-manager-base §2–§6, §8) ----
  missingSubscriptionRegistration: {
    status: 409,
    code: 'MissingSubscriptionRegistration',
    message: "The subscription is not registered to use namespace '{namespace}'. See https://aka.ms/rps-not-found for how to register subscriptions.",
    when: 'A resource is PUT under a provider namespace the subscription is not registered for (details repeat it with the namespace as `target`).',
  },
  invalidResourceNamespace: { status: 404, code: 'InvalidResourceNamespace', message: "The resource namespace '{namespace}' is invalid.", when: 'A provider get, register or unregister names a namespace Stratus does not serve.' },
  resourceGroupBeingDeleted: {
    status: 409,
    code: 'ResourceGroupBeingDeleted',
    message: "The resource group '{name}' is in deprovisioning state and cannot perform this operation.",
    when: 'A resource group is written (PUT, PATCH, tags) or deleted again while its delete is still running.',
  },
  locationRequired: { status: 400, code: 'LocationRequired', message: 'The location property is required for this definition.', when: 'A resource group is created without `location`.' },
  locationNotAvailable: {
    status: 400,
    code: 'LocationNotAvailableForResourceGroup',
    message: "The provided location '{location}' is not available for resource group. List of available regions is '{available}'.",
    when: 'A resource group is created in a location Stratus does not list.',
  },
  resourceGroupLocationImmutable: {
    status: 409,
    code: 'InvalidResourceGroupLocation',
    message: "Invalid resource group location '{given}'. The Resource group already exists in location '{existing}'.",
    when: 'A resource group PUT names another location than the existing group has (location cannot be changed).',
  },
  operationNotFound: { status: 404, code: 'OperationNotFound', message: "The operation '{id}' could not be found.", when: 'An `operationresults` URL names no operation of the subscription.' },
  invalidTagOperation: { status: 400, code: 'InvalidTagOperation', message: "The tag operation '{operation}' is invalid. Allowed values: Replace, Merge, Delete.", when: 'A tags PATCH has another `operation`.' },
  tooManyTags: { status: 400, code: 'InvalidTagCount', message: 'The number of tags ({count}) exceeds the maximum of 50.', when: 'A write would leave more than 50 tags on a resource, group or subscription.' },

  // ---- role definitions and role assignments (issue 27; reference resource-manager-base §7, §8) ----
  invalidRoleAssignmentName: {
    status: 400,
    code: 'InvalidRoleAssignmentId',
    message: "The role assignment ID '{name}' is not valid. The role assignment ID must be a GUID.",
    when: 'A role assignment path names something other than a GUID.',
  },
  roleAssignmentExists: { status: 409, code: 'RoleAssignmentExists', message: 'The role assignment already exists.', when: 'The principal already holds the role at the scope under another assignment name.' },
  roleAssignmentUpdateNotPermitted: {
    status: 400,
    code: 'RoleAssignmentUpdateNotPermitted',
    message: 'Tenant ID, application ID, principal ID, and scope are not allowed to be updated.',
    when: 'A PUT names an existing assignment with another principal, role or scope.',
  },
  roleAssignmentNotFound: { status: 404, code: 'RoleAssignmentNotFound', message: "The role assignment '{name}' is not found.", when: 'A GET names no role assignment at the scope.' },
  principalNotFound: {
    status: 400,
    code: 'PrincipalNotFound',
    message:
      'Principal {principalId} does not exist in the directory {tenantId}. Check that you have the correct principal ID. If you are creating this principal and then immediately assigning a role, this error might be related to a replication delay. In this case, set the role assignment principalType property to a value, such as ServicePrincipal, User, or Group.',
    when: "The `principalId` of a new assignment is no user, group or service principal of the caller's tenant.",
  },
  unmatchedPrincipalType: {
    status: 400,
    code: 'UnmatchedPrincipalType',
    message: "The PrincipalId '{principalId}' has type '{actual}', which is different from specified PrincipalType '{given}'.",
    when: 'The `principalType` of a new assignment is not the type of the principal.',
  },
  roleDefinitionNotFound: { status: 404, code: 'RoleDefinitionDoesNotExist', message: "The specified role definition with ID '{id}' does not exist.", when: 'A role definition GET names no built-in role and no custom role of the tenant.' },
  invalidRoleDefinitionName: {
    status: 400,
    code: 'InvalidRoleDefinitionId',
    message: "The role definition ID '{name}' is not valid. The role definition ID must be a GUID.",
    when: 'A role definition path names something other than a GUID.',
  },
  roleDefinitionNameExists: {
    status: 409,
    code: 'RoleDefinitionWithSameNameExists',
    message: 'A custom role with the same name already exists in this directory. Use a different name.',
    when: 'A custom role is created or renamed with the name of another role of the tenant (built-in or custom).',
  },
  roleDefinitionHasAssignments: { status: 409, code: 'RoleDefinitionHasAssignments', message: 'There are existing role assignments referencing role.', when: 'A custom role that an assignment names is deleted.' },
  builtInRoleReadOnly: { status: 400, code: 'CannotModifyBuiltInRole', message: "The built-in role definition '{id}' cannot be created, changed or deleted.", when: 'A role definition PUT or DELETE names a built-in role id.' },

  // ---- billing (spec §4.4, §7 rule 3) ----
  billingAccountNotFound: { status: 404, code: 'BillingAccountNotFound', message: "The billing account '{name}' could not be found.", when: "The billing account does not exist in the caller's tenant (target `billingAccountName`)." },
  invoiceNotFound: { status: 404, code: 'InvoiceNotFound', message: "The invoice '{name}' could not be found in billing account '{account}'.", when: 'The invoice does not exist in the billing account (target `invoiceName`).' },
});

/**
 * The `WWW-Authenticate` challenge of a resource-manager 401 (RFC 6750 §3; reference: the
 * service names the tenant's authority and says why).
 * @param authority the identity provider's tenant URL (`https://host:port/{tenant}`).
 * @param reason `missing` (no Authorization header), `invalid_header` (not `Bearer <token>`), or any other token failure.
 */
export function armBearerChallenge(authority: string, reason: string): string {
  const description =
    reason === 'missing'
      ? "The authentication failed because of missing 'Authorization' header."
      : reason === 'invalid_header'
        ? "The authentication failed because of malformed 'Authorization' header."
        : 'The access token is invalid.';
  return `Bearer authorization_uri="${authority}", error="invalid_token", error_description="${description}"`;
}
