/**
 * The error catalogue of Stratus's control plane (ours), rendered as RFC 9457 problem+json.
 * Raise with `errors.control.<name>(params, options)`; see `catalogue.ts`. The console
 * (`/_stratus/console`) is part of the control plane and raises these too.
 */
import { defineErrors } from './catalogue.ts';
import { sharedEntries } from './common.ts';

/** Errors of the `control` family. */
export const control = defineErrors('control', {
  invalidBody: { status: 400, code: 'BadRequest', message: '{message}', when: 'The request body does not parse or does not fit the schema.' },
  routeNotFound: { status: 404, code: 'NotFound', message: '{message}', when: 'No route matches the path.' },
  ...sharedEntries('control'),
  controlKeyRequired: {
    status: 401,
    code: 'Unauthorized',
    message: 'The control plane needs the control key: Authorization: Bearer <control key> (STRATUS_CONTROL_KEY or <data dir>/control.key).',
    headers: { 'WWW-Authenticate': 'Bearer realm="stratus-control"' },
    when: 'A control route (under any spelling of its path) without the control key or the console session.',
  },
  faultRuleNotFound: { status: 404, code: 'NotFound', message: 'No fault rule with that id.', when: 'Deleting a fault rule that does not exist.' },
  tenantNotFound: { status: 404, code: 'NotFound', message: "No tenant '{tenant}'.", when: 'The outbound mail of an unknown tenant.' },
  userNotFound: { status: 404, code: 'NotFound', message: "No user '{user}'.", when: 'Setting the password of an unknown user.' },
  appNotFound: { status: 404, code: 'NotFound', message: "No application '{appId}'.", when: 'Setting the secret of an unknown application.' },
  csrfCheckFailed: {
    status: 403,
    code: 'CsrfCheckFailed',
    message: 'A control-plane change authorised by the console session must be sent from the console itself (Origin header of this server).',
    when: 'A state-changing control-plane request (any route, console form or not) authorised by the session cookie comes from another origin, or names none.',
  },
  notANumber: { status: 400, code: 'BadRequest', message: "'{value}' is not a number.", when: 'A number field of a console form does not parse.' },
  snapshotNotFound: { status: 404, code: 'NotFound', message: "No snapshot '{name}'.", when: 'Restoring or deleting a snapshot that does not exist.' },
  snapshotExists: { status: 409, code: 'Conflict', message: "A snapshot named '{name}' exists; delete it first.", when: 'Saving a snapshot under a name in use.' },
  invalidSnapshotName: { status: 400, code: 'BadRequest', message: "'{name}' is not a snapshot name: 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit.", when: 'Saving a snapshot under an invalid name.' },
  invalidClockMove: { status: 400, code: 'BadRequest', message: '{message}', when: 'A clock move names neither or both of advanceSeconds and now, or a time out of range.' },
  invalidWorld: { status: 400, code: 'InvalidWorld', message: '{message}', when: 'An imported world file does not validate (the message names the file, line and path).' },
  requestNotInLog: { status: 404, code: 'NotFound', message: "Request '{id}' is not (or no longer) in the request log.", when: 'The console shows a request the log no longer holds.' },
});
