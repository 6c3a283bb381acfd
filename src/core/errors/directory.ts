/**
 * The error catalogue of the directory API (users, groups, applications, service principals,
 * organization; issue 27 item 6), rendered in the mail family's envelope (`error.code`,
 * `error.message`, `innerError`) because the directory shares the mail family's origin, audience
 * and `/v1.0` path. Codes and messages as the public directory API answers them
 * (`Request_BadRequest`, `Request_ResourceNotFound`, `Authorization_RequestDenied`, …).
 * Raise with `errors.directory.<name>(params, options)`; see `catalogue.ts`.
 */
import { defineErrors } from './catalogue.ts';

/** Errors of the directory API (family `mail`). */
export const directory = defineErrors('mail', {
  dirAccessDenied: { status: 403, code: 'Authorization_RequestDenied', message: 'Insufficient privileges to complete the operation.', when: 'The caller lacks the scope or application role of the operation, or (delegated) a directory role for a write.' },
  dirNotFound: {
    status: 404,
    code: 'Request_ResourceNotFound',
    message: "Resource '{id}' does not exist or one of its queried reference-property objects are not present.",
    when: 'No user, group, application, service principal or assignment of the tenant has the id.',
  },
  dirValueRequired: { status: 400, code: 'Request_BadRequest', message: "A value is required for property '{property}' of resource '{resource}'.", when: 'A required property is missing on create.' },
  dirInvalidValue: { status: 400, code: 'Request_BadRequest', message: "Invalid value specified for property '{property}' of resource '{resource}'.", when: 'A property has the wrong type, is empty or too long.' },
  dirUpnInUse: { status: 400, code: 'Request_BadRequest', message: 'Another object with the same value for property userPrincipalName already exists.', when: 'A user is created (or renamed) with a userPrincipalName in use.' },
  dirUpnDomain: {
    status: 400,
    code: 'Request_BadRequest',
    message: 'The domain portion of the userPrincipalName property is invalid. You must use one of the verified domain names in your organization.',
    when: "The userPrincipalName's domain is not the tenant's.",
  },
  dirPasswordWeak: {
    status: 400,
    code: 'Request_BadRequest',
    message: 'The specified password does not comply with password complexity requirements. Please provide a different password.',
    when: 'The password is shorter than 8 characters or has fewer than three of lower case, upper case, digits and symbols.',
  },
  dirReadOnlyProperty: { status: 400, code: 'Request_BadRequest', message: "Property '{property}' is read-only and cannot be set.", when: 'A write names a read-only property (`id`, `appId`, `createdDateTime`, …).' },
  dirUnknownProperty: { status: 400, code: 'Request_BadRequest', message: "Property '{property}' does not exist as a declared property or extension property.", when: 'A write names a property the resource does not have.' },
  dirRefExists: {
    status: 400,
    code: 'Request_BadRequest',
    message: "One or more added object references already exist for the following modified properties: 'members'.",
    when: 'A member is added to a group it already belongs to.',
  },
  dirRefInvalid: { status: 400, code: 'Request_BadRequest', message: "Invalid object identifier '{id}'.", when: 'A `$ref` body names no directory object by `@odata.id`.' },
  dirUnsupportedQuery: { status: 400, code: 'Request_UnsupportedQuery', message: "Unsupported or invalid query filter clause specified for property '{property}' of resource '{resource}'.", when: '`$filter` names a property that cannot be filtered.' },
  dirUnsupportedOption: { status: 400, code: 'Request_UnsupportedQuery', message: "The query option '{option}' is not supported by the directory of this server.", when: '`$expand`, `$search`, `$skip` or `$format` on a directory path.' },
  dirBadFilter: { status: 400, code: 'BadRequest', message: "Invalid filter clause: {reason}", when: '`$filter` does not parse.' },
  dirBadSelect: { status: 400, code: 'BadRequest', message: "Parsing OData Select and Expand failed: Could not find a property named '{property}' on type 'vendor.graph.{type}'.", when: '`$select` names an unknown property.' },
  dirBadTop: { status: 400, code: 'Request_BadRequest', message: "Invalid page size specified: '{value}'. Must be between 1 and 999 inclusive.", when: '`$top` is not an integer from 1 to 999.' },
  dirBadSkipToken: { status: 400, code: 'Request_BadRequest', message: "The specified page token value '{value}' has expired or is invalid.", when: 'The `$skiptoken` of a next link was altered.' },
  dirCountNeedsHeader: {
    status: 400,
    code: 'Request_BadRequest',
    message: "Count is not currently supported without the 'ConsistencyLevel: eventual' header for this query.",
    when: '`$count=true` or `/$count` without `ConsistencyLevel: eventual`.',
  },
  dirNoPasswordCredential: { status: 400, code: 'Request_BadRequest', message: "No password credential with keyId '{keyId}' exists on the application.", when: '`removePassword` names an unknown key id.' },
  dirKeyCredentialInvalid: { status: 400, code: 'Request_BadRequest', message: 'Key credential is invalid: {reason}', when: 'A `keyCredentials` entry is not an X.509 certificate with type AsymmetricX509Cert and usage Verify, or its dates are wrong.' },
  dirSpExists: {
    status: 409,
    code: 'Request_MultipleObjectsWithSameKeyValue',
    message: 'The service principal cannot be created, updated, or restored because the service principal name {appId} is already in use.',
    when: 'A service principal is created for an application that has one.',
  },
  dirAppNotFoundForSp: { status: 400, code: 'Request_BadRequest', message: "The appId '{appId}' of the service principal does not reference a valid application object.", when: 'A service principal is created for an unknown appId.' },
  dirAppRoleNotFound: { status: 400, code: 'Request_BadRequest', message: "Permission being assigned was not found on application '{resourceId}'.", when: 'The appRoleId is not an app role of the resource service principal.' },
  dirAppRoleExists: { status: 409, code: 'Request_BadRequest', message: 'Permission being assigned already exists on the object.', when: 'The app role is already assigned to the principal.' },
  dirPrincipalMismatch: { status: 400, code: 'Request_BadRequest', message: "The principalId '{principalId}' must be the service principal of the path.", when: 'An app role assignment names another principal than the path.' },
  dirMeNeedsUser: { status: 400, code: 'BadRequest', message: '/me request is only valid with delegated authentication flow.', when: '`/me` with an application token.' },
  dirResourceReadOnly: { status: 400, code: 'Request_BadRequest', message: "The service principal '{id}' of a Stratus API cannot be changed or deleted.", when: 'A write to a built-in resource service principal.' },
});
