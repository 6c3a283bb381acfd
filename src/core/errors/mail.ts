/**
 * The error catalogue of mail (spec: analytics §4.3, §6, §7; reference mail.md §7, §8), rendered
 * as the mail error (`error.code`, `error.message`, `innerError`). Raised by the mail area
 * (`services/mail/`), the change-notification subscriptions (`services/mailsync/`) and the
 * console's mail pages (`services/console/mail.ts`, rendered there in the console's envelope).
 * Raise with `errors.mail.<name>(params, options)`; see `catalogue.ts`.
 *
 * The codes ApplicationThrottled, ErrorInvalidUrlQuery and ErrorMimeContentInvalidBase64String
 * are sent without `innerError` (reference mail §8.1; the set is in `envelope.ts`).
 */
import { defineErrors } from './catalogue.ts';

/**
 * A message whose braces are literal text (a JSON shape, an example path), not parameters:
 * typed as taking only the parameters `P` (none by default), so the raise function asks for
 * exactly those. At run time `{name}` is filled only for a given parameter; the rest stays as
 * written.
 */
function literalBraces<P extends string = never>(message: string): [P] extends [never] ? string : `{${P}}` {
  return message as never;
}

const bearerChallenge = { 'WWW-Authenticate': 'Bearer realm="", error="invalid_token"' };

/** Errors of the `mail` family. */
export const mail = defineErrors('mail', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 400, code: 'BadRequest', message: '{message}', when: 'No route matches the path.' },

  // Authentication, permissions, throttling (reference mail §8.2, §9)
  tokenMissing: { status: 401, code: 'InvalidAuthenticationToken', message: 'Access token is empty.', headers: bearerChallenge, when: 'The request carries no bearer token.' },
  tokenExpired: { status: 401, code: 'InvalidAuthenticationToken', message: 'Lifetime validation failed, the token is expired.', headers: bearerChallenge, when: 'The bearer token has expired.' },
  tokenAudience: { status: 401, code: 'InvalidAuthenticationToken', message: 'Invalid audience.', headers: bearerChallenge, when: 'The bearer token was issued for another audience.' },
  tokenSignature: { status: 401, code: 'InvalidAuthenticationToken', message: 'Signature validation failed.', headers: bearerChallenge, when: 'The bearer token signature does not verify.' },
  tokenMalformed: { status: 401, code: 'InvalidAuthenticationToken', message: 'CompactToken parsing failed with error code: 80049217', headers: bearerChallenge, when: 'The bearer token does not parse.' },
  wrongAudience: { status: 401, code: 'InvalidAuthenticationToken', message: 'Invalid audience.', when: 'A valid token of another family reaches a mail route.' },
  accessDenied: { status: 403, code: 'ErrorAccessDenied', message: 'Access is denied. Check credentials and try again.', when: 'The caller lacks the scope or role of the method, or asks for another user\'s mailbox with a delegated token.' },
  meNeedsUser: { status: 400, code: 'BadRequest', message: '/me request is only valid with delegated authentication flow.', when: '`/me` is used with an application token.' },
  invalidUser: { status: 404, code: 'ErrorInvalidUser', message: "The requested user '{user}' is invalid.", when: 'The user in the path is not in the caller\'s tenant.' },
  throttled: { status: 429, code: 'ApplicationThrottled', message: 'Application is over its MailboxConcurrency limit.', when: 'The app is over its request budget for the mailbox (with `Retry-After`; no innerError).' },

  // Request shape (reference mail §2, §5)
  nulInUrl: { status: 400, code: 'ErrorInvalidRequest', message: 'The request URL contains a NUL character.', when: 'A path segment holds U+0000.' },
  nulInQuery: { status: 400, code: 'ErrorInvalidRequest', message: 'The query string contains a NUL character.', when: 'A query parameter holds U+0000.' },
  nulInBody: { status: 400, code: 'ErrorInvalidRequest', message: 'The request body contains a NUL character, which a mail item cannot hold.', when: 'A JSON body holds U+0000.' },
  duplicateQueryOption: { status: 400, code: 'BadRequest', message: "Query option '{option}' was specified more than once, but it must be specified at most once.", when: 'A system query option is repeated.' },
  pathSegmentEncoding: { status: 400, code: 'BadRequest', message: "The path segment '{segment}' is not valid percent-encoding.", when: 'A path segment does not percent-decode.' },
  segmentNotFound: { status: 400, code: 'BadRequest', message: "Resource not found for the segment '{segment}'.", when: 'A path segment names no resource or action.' },
  methodNotAllowedHere: { status: 405, code: 'ErrorInvalidRequest', message: "The HTTP method '{method}' is not allowed for this resource.", when: 'The resource does not answer the method.' },
  methodNotAllowedForAction: { status: 405, code: 'ErrorInvalidRequest', message: "The HTTP method '{method}' is not allowed for '{action}'.", when: 'A message action is called with a method other than POST.' },
  valueGetOnly: { status: 405, code: 'ErrorInvalidRequest', message: 'Only GET is allowed for $value.', when: '`$value` of a message is called with a method other than GET.' },
  invalidTop: { status: 400, code: 'BadRequest', message: "Invalid value '{value}' for query parameter $top; it must be an integer from 1 to 1000.", when: '`$top` is not an integer from 1 to 1000.' },
  invalidSkip: { status: 400, code: 'BadRequest', message: "Invalid value '{value}' for query parameter $skip; it must be an integer from 0 to {max}.", when: '`$skip` is not a non-negative 32-bit integer.' },
  bodyNotObject: { status: 400, code: 'RequestBodyRead', message: 'The request body must be a JSON object.', when: 'An action body is not a JSON object.' },
  unknownParameter: { status: 400, code: 'RequestBodyRead', message: "The parameter '{parameter}' in the request payload is not a valid parameter for the operation.", when: 'A reply or forward body has a parameter the action does not take.' },
  unknownOperationParameter: { status: 400, code: 'RequestBodyRead', message: "The parameter '{parameter}' in the request payload is not a valid parameter for the operation '{operation}'.", when: 'An action body (sendMail) has a parameter the action does not take.' },
  unknownProperty: { status: 400, code: 'RequestBodyRead', message: "The property '{property}' does not exist on type '{type}'. Make sure to only use property names that are defined by the type or mark the type as open type.", when: 'A message or folder body has a property its type does not define.' },
  mustBeString: { status: 400, code: 'RequestBodyRead', message: "'{property}' must be a string.", when: 'A string property has another type.' },
  propertyTooLong: { status: 400, code: 'ErrorInvalidProperty', message: "The value of '{property}' is {length} characters long; at most {max} are allowed.", when: 'A stored text property passes its limit (a subject over 255 characters).' },
  mustBeBoolean: { status: 400, code: 'RequestBodyRead', message: "'{property}' must be a boolean.", when: 'A boolean property or parameter has another value.' },
  mustBeCollection: { status: 400, code: 'RequestBodyRead', message: "'{property}' must be a collection.", when: 'A collection property is not an array.' },
  mustBeStringCollection: { status: 400, code: 'RequestBodyRead', message: "'{property}' must be a collection of strings.", when: 'A collection of strings holds something else.' },
  mustBeRecipientCollection: { status: 400, code: 'RequestBodyRead', message: "'{property}' must be a collection of recipients.", when: 'A recipient list is not an array.' },

  // Items and folders (reference mail §2, §4, §8.2)
  itemNotFound: { status: 404, code: 'ErrorItemNotFound', message: 'The specified object was not found in the store.', when: 'No message, attachment or extension has the id (also a stale id after a move).' },
  idMalformed: { status: 400, code: 'ErrorInvalidIdMalformed', message: 'Id is malformed.', when: 'An id does not have the shape of an id this store issues.' },
  folderNotFound: { status: 404, code: 'ErrorFolderNotFound', message: 'The specified folder could not be found in the store.', when: 'No folder has the id or well-known name (or it is not a child of the folder before it).' },
  valueTooLong: { status: 400, code: 'ErrorInvalidRequest', message: "'{property}' is {length} characters long; at most {max} are allowed.", when: 'An indexed value is longer than the column that stores it.' },
  destinationRequired: { status: 400, code: 'ErrorInvalidRequest', message: "The request needs a 'destinationId' (a folder id or well-known name).", when: 'A copy or move body has no destination.' },
  folderBodyNotObject: { status: 400, code: 'RequestBodyRead', message: 'The request body must be a mailFolder object.', when: 'A folder body is not a JSON object.' },
  folderNameRequired: { status: 400, code: 'ErrorInvalidRequest', message: "A mail folder needs a 'displayName' of 1 to 255 characters.", when: 'A folder is created or renamed without a usable name.' },
  folderExists: { status: 409, code: 'ErrorFolderExists', message: 'A folder with the specified name already exists.', when: 'A sibling folder already has the name.' },
  distinguishedFolder: { status: 403, code: 'ErrorAccessDenied', message: 'Distinguished folders cannot be {action}.', when: 'A well-known folder is renamed or moved.' },
  deleteDistinguishedFolder: { status: 403, code: 'ErrorDeleteDistinguishedFolder', message: 'Distinguished folders cannot be deleted.', when: 'A well-known folder is deleted.' },
  folderIntoItself: { status: 400, code: 'ErrorMoveCopyFailed', message: 'A folder cannot be {action} into itself or one of its subfolders.', when: 'A folder is moved or copied into its own subtree.' },

  // Messages (reference mail §2.3, §2.4, §3; spec mail §8)
  messageBodyNotObject: { status: 400, code: 'RequestBodyRead', message: 'The request body must be a JSON object (a message).', when: 'A message body is not a JSON object.' },
  invalidLiteral: { status: 400, code: 'RequestBodyRead', message: "Cannot convert the literal '{literal}' to the expected type 'vendor.graph.{type}'.", when: 'An enumeration property has an unknown value.' },
  notARecipient: { status: 400, code: 'RequestBodyRead', message: literalBraces<'property'>('Each entry of \'{property}\' must be a recipient: {"emailAddress":{"address":"…"}}.'), when: 'A recipient list holds something other than a recipient.' },
  notADateTimeTimeZone: { status: 400, code: 'RequestBodyRead', message: literalBraces<'property'>('\'{property}\' must be a dateTimeTimeZone {"dateTime":"…","timeZone":"…"}.'), when: 'A flag date is not a dateTimeTimeZone.' },
  notAnItemBody: { status: 400, code: 'RequestBodyRead', message: literalBraces('\'body\' must be an itemBody {"contentType":"text|html","content":"…"}.'), when: 'The body is not an itemBody.' },
  notAFollowupFlag: { status: 400, code: 'RequestBodyRead', message: "'flag' must be a followupFlag.", when: 'The flag is not an object.' },
  invalidInternetMessageId: { status: 400, code: 'RequestBodyRead', message: "'internetMessageId' must be an RFC 5322 message id such as '<local@domain>'.", when: 'The internet message id is not `<local@domain>`.' },
  headersNotCollection: { status: 400, code: 'RequestBodyRead', message: literalBraces("'internetMessageHeaders' must be a collection of {name, value}."), when: 'The internet message headers are not an array.' },
  headerNeedsNameValue: { status: 400, code: 'RequestBodyRead', message: "Each internet message header needs a string 'name' and 'value'.", when: 'A header lacks its name or value.' },
  invalidHeaderName: { status: 400, code: 'InvalidInternetMessageHeader', message: "The internet message header name '{name}' should start with 'x-' or 'X-'.", when: 'A custom header is not named `x-…`.' },
  headersOnlyOnCreate: { status: 400, code: 'ErrorInvalidPropertySet', message: 'Custom internet message headers can be set only when the message is created.', when: 'A PATCH sets internet message headers.' },
  onlyOnCreate: { status: 400, code: 'ErrorInvalidPropertySet', message: "'{property}' cannot be set with PATCH; post to the message's {property} collection.", when: 'A PATCH sets attachments or extensions.' },
  notDraft: { status: 400, code: 'ErrorInvalidPropertySet', message: 'Message is not draft.', when: 'A PATCH of a sent message sets a draft-only property.' },
  dueNeedsStart: { status: 400, code: 'ErrorInvalidRequest', message: "'flag/dueDateTime' requires 'flag/startDateTime'.", when: 'A flag has a due date without a start date.' },
  mentionNeedsAddress: { status: 400, code: 'RequestBodyRead', message: "Each mention needs 'mentioned' with an 'address'.", when: 'A mention lacks its address.' },
  singleValuePropertyId: { status: 400, code: 'RequestBodyRead', message: literalBraces("Each extended property needs an 'id' such as 'String {guid} Name X'."), when: 'A single-value extended property has no usable id.' },
  singleValuePropertyValue: { status: 400, code: 'RequestBodyRead', message: "Each single-value extended property needs a 'value'.", when: 'A single-value extended property has no scalar value.' },
  multiValuePropertyId: { status: 400, code: 'RequestBodyRead', message: literalBraces("Each multi-value extended property needs an 'id' such as 'StringArray {guid} Name X'."), when: 'A multi-value extended property has no usable id.' },
  multiValuePropertyValue: { status: 400, code: 'RequestBodyRead', message: "Each multi-value extended property needs a 'value' collection.", when: 'A multi-value extended property has no value array.' },
  tooManyRecipients: { status: 400, code: 'ErrorExceededMaxRecipientLimit', message: 'The message has {count} recipients in toRecipients, ccRecipients and bccRecipients combined; at most {max} are allowed.', when: 'To, cc and bcc together exceed the recipient cap.' },
  mimeInvalidBase64: { status: 400, code: 'ErrorMimeContentInvalidBase64String', message: 'Invalid base64 string for MIME content.', when: 'A MIME body is not base64 or has no header/body split (no innerError).' },

  // Sending, replies and actions (reference mail §2.7, §2.8)
  sendMailBody: { status: 400, code: 'RequestBodyRead', message: literalBraces('The request body must be {"message": {…}, "saveToSentItems": true|false}.'), when: 'A sendMail body is not a JSON object.' },
  messageRequired: { status: 400, code: 'ErrorInvalidRequest', message: "The request needs a 'message'.", when: 'A sendMail body has no message.' },
  sendAsDenied: { status: 403, code: 'ErrorSendAsDenied', message: 'The user account which was used to submit this request does not have the right to send mail on behalf of the specified sending account.', when: '`from` or `sender` is not the mailbox owner.' },
  noRecipients: { status: 400, code: 'ErrorInvalidRecipients', message: "At least one recipient is not valid., A message can't be sent because it contains no recipients.", when: 'A message is sent without recipients.' },
  recipientUnresolved: { status: 400, code: 'ErrorInvalidRecipients', message: 'At least one recipient isn\'t valid., Recipient "{address}" isn\'t resolved. All recipients must be resolved before a message can be submitted.', when: 'A recipient address is not an email address.' },
  messageNotObject: { status: 400, code: 'RequestBodyRead', message: "'message' must be a message object.", when: 'The message parameter of a reply or forward is not an object.' },
  commentAndBody: { status: 400, code: 'ErrorInvalidRequest', message: "'comment' and 'message.body' cannot both be given.", when: 'A reply or forward has both a comment and a message body.' },
  toRecipientsTwice: { status: 400, code: 'ErrorInvalidRequest', message: "Give 'toRecipients' either as a parameter or inside 'message', not both.", when: 'A forward names its recipients twice.' },
  notADraftToSend: { status: 400, code: 'ErrorInvalidRequest', message: 'Only a draft message can be sent.', when: '`send` is called on a message that is not a draft.' },
  recallNotSent: { status: 400, code: 'ErrorInvalidRequest', message: 'Only a message in Sent Items can be recalled.', when: '`recall` is called on a message outside Sent Items.' },
  noUnsubscribe: { status: 400, code: 'ErrorInvalidRequest', message: 'The message has no List-Unsubscribe mailto command (unsubscribeEnabled is false).', when: '`unsubscribe` is called on a message without a mailto unsubscribe command.' },
  invalidReportAction: { status: 400, code: 'ErrorInvalidRequest', message: "'ReportAction' must be one of unknown, junk, notJunk, phish.", when: '`reportMessage` has an unknown action.' },

  // Attachments, extensions, upload sessions (reference mail §2.9, §2.10)
  attachmentBodyNotObject: { status: 400, code: 'RequestBodyRead', message: 'The request body must be an attachment object.', when: 'An attachment body is not a JSON object.' },
  attachmentTypeRequired: { status: 400, code: 'ErrorInvalidRequest', message: "An attachment needs '@odata.type': '#vendor.graph.fileAttachment', '#vendor.graph.itemAttachment' or '#vendor.graph.referenceAttachment'.", when: 'An attachment has no known `@odata.type`.' },
  attachmentNameRequired: { status: 400, code: 'ErrorInvalidRequest', message: "An attachment needs a 'name'.", when: 'An attachment has no name.' },
  fileAttachmentBytes: { status: 400, code: 'ErrorInvalidRequest', message: "A file attachment needs 'contentBytes' in base64.", when: 'A file attachment has no base64 content.' },
  itemAttachmentItem: { status: 400, code: 'ErrorInvalidRequest', message: "An item attachment needs an 'item'.", when: 'An item attachment has no item.' },
  attachmentTooLarge: { status: 413, code: 'ErrorAttachmentSizeLimitExceeded', message: 'The attachment is {size} bytes; attachments over {max} bytes need an upload session.', when: 'A posted attachment is over 3 MB.' },
  referenceAttachmentNoContent: { status: 405, code: 'ErrorInvalidRequest', message: 'A reference attachment has no raw content.', when: '`$value` of a reference attachment is asked for.' },
  extensionBodyNotObject: { status: 400, code: 'RequestBodyRead', message: 'The request body must be an open extension object.', when: 'An extension body is not a JSON object.' },
  extensionNameRequired: { status: 400, code: 'ErrorInvalidRequest', message: "An open extension needs an 'extensionName' such as 'Com.Contoso.Referral'.", when: 'An extension has no usable name.' },
  extensionExists: { status: 409, code: 'ErrorItemAlreadyExists', message: "An extension named '{name}' already exists on this item.", when: 'The message already has an extension of that name.' },
  attachmentItemRequired: { status: 400, code: 'ErrorInvalidRequest', message: "The request needs an 'AttachmentItem'.", when: 'An upload session body has no AttachmentItem.' },
  uploadFileOnly: { status: 400, code: 'ErrorInvalidRequest', message: "Upload sessions take 'attachmentType' 'file'.", when: 'An upload session is asked for another attachment type.' },
  attachmentItemName: { status: 400, code: 'ErrorInvalidRequest', message: "'AttachmentItem' needs a 'name'.", when: 'The AttachmentItem has no name.' },
  attachmentItemSize: { status: 400, code: 'ErrorInvalidRequest', message: "'AttachmentItem' needs an integer 'size'.", when: 'The AttachmentItem has no usable size.' },
  uploadTooSmall: { status: 400, code: 'ErrorAttachmentSizeShouldNotBeLessThanMinimumSize', message: 'Attachment size must be at least {min} bytes for an upload session; post smaller files directly.', when: 'An upload session is asked for a file under 3 MB.' },
  uploadTooLarge: { status: 400, code: 'ErrorAttachmentSizeLimitExceeded', message: 'Attachment size must not exceed {max} bytes.', when: 'An upload session is asked for a file over 150 MB.' },
  uploadSessionNotFound: { status: 404, code: 'ErrorItemNotFound', message: 'The upload session was not found or has expired.', when: 'The upload URL names no live session.' },
  chunkNotOctetStream: { status: 400, code: 'ErrorInvalidRequest', message: 'The chunk must be sent as application/octet-stream.', when: 'A chunk is not sent as bytes.' },
  contentRangeRequired: { status: 400, code: 'ErrorInvalidRequest', message: literalBraces("A 'Content-Range: bytes {start}-{end}/{total}' header is required."), when: 'A chunk has no usable Content-Range.' },
  contentRangeUnexpected: { status: 416, code: 'ErrorInvalidContentRange', message: 'Expected the range starting at {offset} of {size} bytes, at most {chunk} bytes, matching the body length.', when: 'A chunk is not the next range, too large, or does not match its body.' },
  contentRangeReceived: { status: 416, code: 'ErrorInvalidContentRange', message: 'The range starting at {start} was already received.', when: 'Two chunks of the same range race; the second loses.' },

  // Queries (reference mail §5)
  selectPropertyNotFound: { status: 400, code: 'RequestBroker--ParseUri', message: "Could not find a property named '{property}' on type 'vendor.graph.message'.", when: '`$select`, `$expand` or `$orderby` names an unknown property.' },
  invalidExpand: { status: 400, code: 'BadRequest', message: "Invalid expand clause: '{clause}'; expected ($filter=id eq '…').", when: 'An `$expand` option is not an id filter.' },
  invalidFilterSyntax: { status: 400, code: 'BadRequest', message: "Invalid filter clause: {reason} in '{filter}'.", when: '`$filter` does not parse.' },
  filterPropertyNotFound: { status: 400, code: 'BadRequest', message: "Invalid filter clause: Could not find a property named '{property}' on type 'vendor.graph.message'.", when: '`$filter` names an unknown property.' },
  filterUnsupportedProperty: { status: 400, code: 'ErrorInvalidUrlQueryFilter', message: 'The query filter contains one or more invalid nodes.', when: '`$filter` uses a property the service cannot filter on (recipients, bodies).' },
  filterInvalidNodes: { status: 400, code: 'ErrorInvalidUrlQueryFilter', message: 'The query filter contains one or more invalid nodes. {reason}', when: '`$filter` compares values the service cannot compare.' },
  searchWithOrderBy: { status: 400, code: 'SearchWithOrderBy', message: "The query parameter '$orderBy' is not supported with '$search'.", when: '`$orderby` is given with `$search`.' },
  invalidOrderBy: { status: 400, code: 'BadRequest', message: 'Invalid orderby clause: {reason}', when: '`$orderby` does not parse.' },
  inefficientFilter: { status: 400, code: 'InefficientFilter', message: 'The restriction or sort order is too complex for this operation.', when: '`$orderby` properties do not lead `$filter` properties in the same order.' },

  // Delta (reference mail §6)
  deltaNeedsFolder: { status: 400, code: 'ErrorInvalidRequest', message: literalBraces('Delta of messages is available per folder: /mailFolders/{id}/messages/delta.'), when: 'Delta is asked for mailbox-wide.' },
  deltaFilterUnsupported: { status: 400, code: 'ErrorInvalidUrlQuery', message: "The '$filter' parameter value is not supported for 'Messages' resource; only a value of 'receivedDateTime ge value' is supported.", when: 'A delta `$filter` is not `receivedDateTime ge|gt value` (no innerError).' },
  deltaOrderByUnsupported: { status: 400, code: 'ErrorInvalidUrlQuery', message: "The '$orderby' parameter value is not supported for delta; only 'receivedDateTime desc' is supported.", when: 'A delta `$orderby` is not `receivedDateTime desc` (no innerError).' },
  deltaSearchUnsupported: { status: 400, code: 'ErrorInvalidUrlQuery', message: "The '$search' parameter is not supported for delta.", when: 'Delta is asked with `$search` (no innerError).' },
  deltaChangeTypeInvalid: { status: 400, code: 'ErrorInvalidUrlQuery', message: "'changeType' takes created, updated or deleted.", when: 'A delta `changeType` names another change (no innerError).' },
  syncStateNotFound: { status: 400, code: 'syncStateNotFound', message: 'The sync state could not be found; start a new delta round without a token.', when: 'A delta token does not decode or belongs to another folder.' },
  resyncRequired: { status: 410, code: 'resyncRequired', message: 'The sync state is no longer valid; start a new delta round.', when: 'A delta token is ahead of the change log (with `Location` of a fresh round).' },

  // Change-notification subscriptions (reference mail §7.1, §7.2)
  subscriptionBadPayload: { status: 400, code: 'InvalidRequest', message: 'Could not process subscription creation payload. Are all property names spelled and camelCased properly?', when: 'A subscription body is not an object, has an unknown property or a value of the wrong type.' },
  subscriptionNotFound: { status: 404, code: 'ErrorSubscriptionNotFound', message: "The subscription '{id}' was not found.", when: 'No live subscription of the caller has the id.' },
  subscriptionPropertyRequired: { status: 400, code: 'InvalidRequest', message: "The property '{property}' is required to create a subscription.", when: 'A required subscription property is missing.' },
  subscriptionControlCharacters: { status: 400, code: 'InvalidRequest', message: "The property '{property}' must not contain control characters.", when: 'A subscription property holds a control character.' },
  subscriptionNulCharacters: { status: 400, code: 'InvalidRequest', message: "The property '{property}' must not contain NUL characters.", when: 'The client state holds U+0000.' },
  subscriptionPropertyTooLong: { status: 400, code: 'InvalidRequest', message: "The property '{property}' must be at most {max} characters.", when: 'A subscription property is longer than its column.' },
  invalidChangeType: { status: 400, code: 'InvalidRequest', message: "The changeType '{changeType}' is not valid: use a comma-separated list of created, updated and deleted.", when: 'The changeType names another change or one twice.' },
  receiverNotAbsolute: { status: 400, code: 'InvalidRequest', message: "The {property} '{url}' is not an absolute URL.", when: 'A receiver URL does not parse.' },
  receiverFragment: { status: 400, code: 'InvalidRequest', message: 'The {property} must not carry a fragment.', when: 'A receiver URL has a fragment.' },
  receiverNotHttps: { status: 400, code: 'InvalidRequest', message: 'The {property} must use https; plain http is accepted only for a loopback receiver (127.0.0.1, ::1, localhost).', when: 'A receiver URL is neither https nor loopback http.' },
  expirationInvalid: { status: 400, code: 'InvalidRequest', message: "The expirationDateTime '{value}' is not a valid date-time.", when: 'The expiration is not an ISO 8601 date-time.' },
  expirationPast: { status: 400, code: 'InvalidRequest', message: 'Subscription expiration must be in the future.', when: 'The expiration has passed.' },
  expirationTooFar: { status: 400, code: 'ExtensionError', message: 'Subscription expiration can only be {max} minutes in the future.', when: 'The expiration is beyond the maximum lifetime.' },
  clientStateTooLong: { status: 400, code: 'InvalidRequest', message: 'The clientState must be at most 128 characters.', when: 'The client state is over 128 characters.' },
  tlsVersionInvalid: { status: 400, code: 'InvalidRequest', message: "The latestSupportedTlsVersion '{version}' is not valid: use one of {versions}.", when: 'The TLS version is not one of v1_0–v1_3.' },
  resourceDataUnsupported: { status: 400, code: 'InvalidRequest', message: 'Notifications with resource data (includeResourceData) are not supported for this resource on this server; subscribe with includeResourceData false.', when: '`includeResourceData` is true.' },
  contentTypeUnsupported: { status: 400, code: 'InvalidRequest', message: "The notificationContentType '{contentType}' is not supported; use application/json.", when: 'The notification content type is not JSON.' },
  resourceUnsupported: { status: 400, code: 'InvalidRequest', message: literalBraces<'resource'>("The resource '{resource}' is not supported: subscribe to me/messages, users/{id}/messages or …/mailFolders/{id}/messages."), when: 'The resource is not a message collection.' },
  resourceFilterTwice: { status: 400, code: 'InvalidRequest', message: 'The query option $filter of the subscription resource is given more than once.', when: 'The resource repeats `$filter`.' },
  resourceFilterEmpty: { status: 400, code: 'InvalidRequest', message: 'The query option $filter of the subscription resource is empty.', when: 'The resource has an empty `$filter`.' },
  resourceQueryOption: { status: 400, code: 'InvalidRequest', message: "The query option '{option}' of the subscription resource is not supported by this server; only $filter is.", when: 'The resource has a query option other than `$filter`.' },
  resourceFilterNul: { status: 400, code: 'InvalidRequest', message: 'The $filter of the subscription resource must not contain NUL characters.', when: 'The resource `$filter` holds U+0000.' },
  resourceSegmentEncoding: { status: 400, code: 'InvalidRequest', message: "The resource segment '{segment}' is not valid percent-encoding.", when: 'A resource segment does not percent-decode.' },
  resourceSegmentControl: { status: 400, code: 'InvalidRequest', message: "The resource segment '{segment}' must not contain control characters.", when: 'A decoded resource segment holds a control character.' },
  validationTimedOut: { status: 400, code: 'InvalidRequest', message: 'Subscription validation request timed out.', when: 'A receiver did not answer the validation handshake in time.' },
  validationFailed: { status: 400, code: 'ValidationError', message: 'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.', when: 'A receiver answered the validation handshake wrongly or was refused.' },
  subscriptionLimit: { status: 403, code: 'ExtensionError', message: 'The mailbox already has the maximum of {max} active subscriptions.', when: 'The mailbox has the maximum of active subscriptions.' },
  invalidSkipToken: { status: 400, code: 'BadRequest', message: 'The $skiptoken is not valid.', when: 'A subscription list `$skiptoken` does not decode.' },
  lifecycleUrlImmutable: { status: 400, code: 'InvalidRequest', message: 'The lifecycleNotificationUrl can only be set when the subscription is created.', when: 'A PATCH sets the lifecycle URL.' },
  subscriptionPropertyImmutable: { status: 400, code: 'InvalidRequest', message: "The property '{property}' of a subscription cannot be updated; only expirationDateTime and notificationUrl can.", when: 'A PATCH sets another property.' },

  // The console's mail pages (rendered in the console's envelope)
  consoleMailboxNotFound: { status: 404, code: 'NotFound', message: "No mailbox '{user}' in tenant '{tenant}'.", when: 'A console mail page names a user outside the tenant.' },
  consoleNotFileAttachment: { status: 404, code: 'NotFound', message: 'Only file attachments can be downloaded.', when: 'The console is asked to download an item or reference attachment.' },
});
